// Package haproxytest runs Debian's HAProxy in front of loopback nodes for
// tests, with the configuration `datadesk proxy config` writes, until the
// test ends.
package haproxytest

import (
	"testing"

	"datadesk/cluster"
)

// ErrNoHAProxy is returned when no haproxy binary is installed.
var ErrNoHAProxy = cluster.ErrNoHAProxy

// Binary returns the path of haproxy.
func Binary() (string, error) { return cluster.HAProxyBinary() }

// FreeAddr returns a loopback address with a port free a moment ago.
func FreeAddr() (string, error) { return cluster.FreeAddr() }

// Start runs HAProxy for the ring on a free loopback port and returns its
// address; it stops when the test ends.
func Start(t testing.TB, ring *cluster.Ring) (string, error) {
	p, err := StartProxy(t, ring)
	if err != nil {
		return "", err
	}
	return p.Addr, nil
}

// StartProxy is Start returning the running proxy, whose Stats address
// serves its stats page and its Prometheus metrics (/metrics).
func StartProxy(t testing.TB, ring *cluster.Ring) (*cluster.Proxy, error) {
	addr, err := cluster.FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := cluster.StartHAProxy(ring, addr, t.TempDir())
	if err != nil {
		return nil, err
	}
	t.Cleanup(p.Stop)
	return p, nil
}
