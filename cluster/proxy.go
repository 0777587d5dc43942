package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// ErrNoHAProxy is returned when no haproxy binary is installed.
var ErrNoHAProxy = errors.New("haproxy is not installed (Debian: apt-get install haproxy)")

// proxyStartWait bounds the wait for a started proxy to listen.
const proxyStartWait = 10 * time.Second

// HAProxyBinary returns the path of haproxy.
func HAProxyBinary() (string, error) {
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", ErrNoHAProxy
}

// Proxy is a running HAProxy in front of a ring's nodes.
type Proxy struct {
	// Addr is where it listens, Stats where its stats page does.
	Addr  string
	Stats string
	cmd   *exec.Cmd
}

// StartHAProxy writes the ring's configuration into dir, checks it with
// `haproxy -c`, and runs HAProxy in the foreground on bind until Stop.
func StartHAProxy(ring *Ring, bind, dir string) (*Proxy, error) {
	bin, err := HAProxyBinary()
	if err != nil {
		return nil, err
	}
	stats, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	conf, err := HAProxyConfig(ring, ProxyConfig{Bind: bind, Stats: stats, Timeout: 60})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cluster: haproxy -c: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proxy{Addr: bind, Stats: stats, cmd: cmd}
	deadline := time.Now().Add(proxyStartWait)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", bind, 200*time.Millisecond); err == nil {
			c.Close()
			return p, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Stop()
	return nil, fmt.Errorf("cluster: haproxy did not listen on %s within %s", bind, proxyStartWait)
}

// Stop ends the proxy.
func (p *Proxy) Stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
