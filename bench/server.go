package bench

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"datadesk/cluster"
	"datadesk/engine"
)

// serverProcess is a datadesk server run as a process of its own, so that
// what is measured of its memory is the server's alone.
type serverProcess struct {
	cmd  *exec.Cmd
	base string
	log  string
	done chan error
}

// serverStart is how long a server may take to answer /healthz.
const serverStart = time.Minute

// startServer runs command (a datadesk binary and its serve command) on
// data with ecfg's limits, its log in logPath, and waits until it answers.
func startServer(command, env []string, data string, ecfg engine.Config, logPath string) (*serverProcess, error) {
	if len(command) == 0 {
		return nil, errors.New("bench: no server command")
	}
	addr, err := cluster.FreeAddr()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	args := append(command[1:len(command):len(command)], "--addr", addr, "--data", data, "--max-open", strconv.Itoa(ecfg.MaxOpen),
		"--memory-limit", ecfg.MemoryLimit, "--threads", strconv.Itoa(ecfg.Threads))
	cmd := exec.Command(command[0], args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serverProcess{cmd: cmd, base: "http://" + addr, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	deadline := time.Now().Add(serverStart)
	for {
		if resp, err := http.Get(p.base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case err := <-p.done:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("bench: the server stopped (%v): %s", err, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("bench: the server did not answer within %s", serverStart)
		}
	}
}

// peak resets the server's peak resident memory and returns a reader of
// it in MiB.
func (p *serverProcess) peak() func() float64 {
	return peakOf(strconv.Itoa(p.cmd.Process.Pid))
}

// stop ends the server as an operator would (SIGTERM), or kills it if it
// does not stop in time.
func (p *serverProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
