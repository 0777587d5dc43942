package cluster_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"datadesk"
	"datadesk/cluster"
	"datadesk/cluster/haproxytest"
	"datadesk/internal/testenv"
)

// stubNodeEnv makes the test binary a stand-in node instead: it answers
// /healthz and, to every other request, its name.
const stubNodeEnv = "DATADESK_STUB_NODE"

func TestMain(m *testing.M) {
	if v := os.Getenv(stubNodeEnv); v != "" {
		name, addr, _ := strings.Cut(v, "=")
		http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
		http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })
		if err := http.ListenAndServe(addr, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// TestHungNodeFailsFast stops one of two nodes with SIGSTOP behind the
// proxy configuration HAProxyConfig writes: it still accepts connections
// and never answers. Within 10 seconds its owners get the proxy's JSON 503
// (a call it was serving ends too), while the other node's owners are
// answered throughout, and no owner is sent to the other node; once it
// goes on, its owners are answered again. The proxy's Prometheus metrics
// say it marked the node down and count its owners' 503s.
func TestHungNodeFailsFast(t *testing.T) {
	if _, err := haproxytest.Binary(); errors.Is(err, haproxytest.ErrNoHAProxy) {
		testenv.Missing(t, "%v", err)
	}
	var list []string
	procs := map[string]*exec.Cmd{}
	for _, name := range []string{"a", "b"} {
		addr, err := cluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), stubNodeEnv+"="+name+"="+addr)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGCONT)
			cmd.Process.Kill()
			cmd.Wait()
		})
		procs[name] = cmd
		list = append(list, name+"="+addr)
		waitListening(t, addr)
	}
	ring, err := cluster.ParseNodes(strings.Join(list, ","))
	if err != nil {
		t.Fatal(err)
	}
	p, err := haproxytest.StartProxy(t, ring)
	if err != nil {
		t.Fatal(err)
	}
	proxy := p.Addr
	owners := map[string]string{}
	for len(owners) < 2 {
		o := datadesk.NewID("u")
		owners[ring.Owner(o).Name] = o
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ask := func(owner string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+proxy+"/v1/files", nil)
		req.Header.Set("Authorization", "Bearer dd_"+owner+".c2VjcmV0")
		res, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// Both answered, the checks settled.
	deadline := time.Now().Add(10 * time.Second)
	for _, name := range []string{"a", "b"} {
		for {
			code, body := ask(owners[name])
			if code == 200 && body == name {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("owner of %s before the stop: %d %s", name, code, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	if err := procs["a"].Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The signal is sent, not yet taken: a thread still running answered
	// a call after it. The node is hung once the system says it stopped.
	waitStopped(t, procs["a"].Process.Pid)
	stopped := time.Now()
	// A call caught by the stop ends.
	inFlight := make(chan time.Duration, 1)
	go func() {
		ask(owners["a"])
		inFlight <- time.Since(stopped)
	}()
	var failedFast time.Duration
	for failedFast == 0 {
		code, body := ask(owners["a"])
		switch {
		case code == http.StatusServiceUnavailable:
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "unavailable" {
				t.Fatalf("the hung node's owner got a 503 that is not the JSON error: %s", body)
			}
			failedFast = time.Since(stopped)
		case code == 200:
			t.Fatalf("the hung node's owner was answered %q", body)
		}
		if bCode, bBody := ask(owners["b"]); bCode != 200 || bBody != "b" {
			t.Fatalf("the other node's owner while a hangs: %d %s", bCode, bBody)
		}
		if time.Since(stopped) > 15*time.Second {
			t.Fatalf("the hung node's owner got no 503 in 15 s (last %d %s)", code, body)
		}
	}
	t.Logf("a hung: its owner's 503 after %v", failedFast.Round(time.Millisecond))
	if failedFast > 10*time.Second {
		t.Errorf("the hung node's owner waited %v for a 503, want within 10 s", failedFast)
	}
	// The proxy's Prometheus metrics say what the alerts read: node a
	// marked down, and the 503s its owners got, by its section.
	metrics := proxyMetrics(t, p.Stats)
	for _, want := range []string{`haproxy_server_status{proxy="node_a",server="a",state="DOWN"} 1`,
		`haproxy_server_status{proxy="node_b",server="b",state="DOWN"} 0`, `haproxy_backend_http_responses_total{proxy="node_b",code="5xx"} 0`} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("the proxy's metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, `haproxy_backend_http_responses_total{proxy="node_a",code="5xx"} 0`+"\n") {
		t.Errorf("the proxy's metrics count no 5xx for node a's owners")
	}
	select {
	case d := <-inFlight:
		t.Logf("the call caught by the stop ended after %v", d.Round(time.Millisecond))
		if d > 10*time.Second {
			t.Errorf("the call caught by the stop ended after %v, want within 10 s", d)
		}
	case <-time.After(15 * time.Second):
		t.Error("the call caught by the stop did not end in 15 s")
	}

	if err := procs["a"].Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		code, body := ask(owners["a"])
		if code == 200 && body == "a" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's owner once it goes on: %d %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// proxyMetrics reads the proxy's Prometheus metrics from its stats
// address.
func proxyMetrics(t *testing.T, stats string) string {
	t.Helper()
	res, err := http.Get("http://" + stats + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the proxy's metrics: %d %v", res.StatusCode, err)
	}
	return string(b)
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s", addr)
}

// waitStopped waits until every thread of process pid is stopped by a
// signal ("T" in /proc/PID/task/TID/stat).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	stopped := func() bool {
		stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(stats) == 0 {
			t.Fatalf("the threads of process %d: %v", pid, err)
		}
		for _, p := range stats {
			b, err := os.ReadFile(p)
			// The state follows the command's name in parentheses.
			if i := bytes.LastIndexByte(b, ')'); err == nil && (i < 0 || i+2 >= len(b) || b[i+2] != 'T') {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); !stopped(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not stop", pid)
		}
	}
}
