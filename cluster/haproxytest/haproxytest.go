// Package haproxytest runs Debian's HAProxy in front of loopback nodes for
// tests: the configuration `datadesk proxy config` writes, checked with
// `haproxy -c`, then run in the foreground until the test ends.
package haproxytest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"datadesk/cluster"
)

// ErrNoHAProxy is returned when no haproxy binary is installed.
var ErrNoHAProxy = errors.New("haproxy is not installed (make deps installs Debian's package)")

// startWait bounds the wait for the proxy to listen.
const startWait = 10 * time.Second

// Binary returns the path of haproxy.
func Binary() (string, error) {
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", ErrNoHAProxy
}

// FreeAddr returns a loopback address with a port free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Start writes the ring's proxy configuration, checks it with haproxy -c,
// runs haproxy and returns its address; it stops when the test ends.
func Start(t testing.TB, ring *cluster.Ring) (string, error) {
	bin, err := Binary()
	if err != nil {
		return "", err
	}
	addr, err := FreeAddr()
	if err != nil {
		return "", err
	}
	conf, err := cluster.HAProxyConfig(ring, cluster.ProxyConfig{Bind: addr, Timeout: 60})
	if err != nil {
		return "", err
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return "", err
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		return "", fmt.Errorf("haproxy -c: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(startWait)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return addr, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("haproxy did not listen on %s within %s", addr, startWait)
}
