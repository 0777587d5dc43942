package cluster

import (
	"fmt"
	"net"
	"strings"
)

// The owner key is a user id: "u_" and 26 base32 characters.
const (
	ownerIDLen = 28
	ownerIDRe  = "u_[a-z2-7]{26}"
)

// ProxyConfig is what HAProxyConfig writes.
type ProxyConfig struct {
	// Bind is the proxy's listen address, host:port.
	Bind string
	// Timeout bounds a request at the proxy, in seconds; 0 means 300.
	Timeout int
}

// HAProxyConfig returns a configuration for HAProxy 2.6 that sends every
// request of one owner to the node the ring gives it. The owner is read,
// most preferred last (each rule overrides the one before), from a signed
// download link's o parameter, the session cookie `<owner>.<secret>`, the
// bearer token `dd_<owner>.<secret>`, and X-On-Behalf-Of when it holds a
// user id. Requests that carry no owner (health, the tool list, sign-in)
// go to any node. Servers have no health check on purpose: a lost node's
// owners must wait for it (HAProxy answers 503), not move to nodes that do
// not hold their files.
func HAProxyConfig(r *Ring, cfg ProxyConfig) (string, error) {
	if _, _, err := net.SplitHostPort(cfg.Bind); err != nil {
		return "", fmt.Errorf("cluster: proxy bind %q: want host:port: %w", cfg.Bind, err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 300
	}
	var b strings.Builder
	fmt.Fprintf(&b, `global
  maxconn 4096

defaults
  mode http
  timeout connect 5s
  timeout client %[1]ds
  timeout server %[1]ds
  timeout http-request 10s

frontend datadesk
  bind %[2]s
  # The nodes count sign-in failures by client address: they read it from
  # this header, set here whatever the client sent, and trust it only from
  # this proxy's address (serve --trusted-proxies).
  http-request set-header X-Forwarded-For %%[src]
  http-request set-var(txn.owner) url_param(o) if { url_param(o) -m reg '^%[3]s$' }
  http-request set-var(txn.owner) req.cook(datadesk_session),bytes(0,%[4]d) if { req.cook(datadesk_session) -m reg '^%[3]s[.]' }
  http-request set-var(txn.owner) req.hdr(Authorization),bytes(10,%[4]d) if { req.hdr(Authorization) -m reg '^Bearer dd_%[3]s[.]' }
  http-request set-var(txn.owner) req.hdr(X-On-Behalf-Of) if { req.hdr(X-On-Behalf-Of) -m reg '^%[3]s$' }
  default_backend nodes

backend nodes
  balance hash var(txn.owner)
  hash-type consistent sdbm avalanche
`, timeout, cfg.Bind, ownerIDRe, ownerIDLen)
	for _, n := range r.nodes {
		fmt.Fprintf(&b, "  server %s %s id %d\n", n.Name, n.Addr, n.ID)
	}
	return b.String(), nil
}
