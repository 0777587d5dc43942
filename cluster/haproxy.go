package cluster

import (
	"fmt"
	"hash/fnv"
	"net"
	"regexp"
	"strings"
)

// The owner key is a user id: "u_" and 26 base32 characters.
const (
	ownerIDLen = 28
	ownerIDRe  = "u_[a-z2-7]{26}"
)

var ownerID = regexp.MustCompile("^" + ownerIDRe + "$")

// IsOwnerID reports whether s is a user id, as the proxy reads owners.
func IsOwnerID(s string) bool { return ownerID.MatchString(s) }

// ProxyConfig is what HAProxyConfig writes.
type ProxyConfig struct {
	// Bind is the proxy's listen address, host:port.
	Bind string
	// Stats is where the proxy's stats page and its Prometheus metrics
	// (/metrics) listen, host:port; keep it on an address only the
	// operators and Prometheus reach. Empty means 127.0.0.1:8404.
	Stats string
	// Timeout bounds a request at the proxy, in seconds; 0 means 300.
	Timeout int
}

// proxyErrors are the answers the proxy itself gives, as JSON like every
// other answer of the server.
var proxyErrors = []struct {
	status     int
	code, text string
}{
	{400, "invalid", "the request could not be read"},
	{404, "not_found", "no such page here"},
	{408, "timeout", "the request took too long to arrive"},
	{500, "internal", "internal error at the proxy"},
	{502, "unavailable", "the node that holds this account answered badly; try again once it is back"},
	{503, "unavailable", "the node that holds this account cannot be reached; try again once it is back"},
	{504, "timeout", "the node that holds this account took too long to answer"},
}

// nodeSocket names the proxy's own socket in front of node n, in Linux's
// abstract namespace: unique on the machine, since no two proxies bind
// one address, and short whatever the address (a name has 107 bytes).
func nodeSocket(bind string, n Node) string {
	h := fnv.New64a()
	h.Write([]byte(bind))
	return fmt.Sprintf("datadesk-%016x-%d", h.Sum64(), n.ID)
}

// HAProxyConfig returns a configuration for HAProxy 2.6 that sends every
// request of one owner to the node the ring gives it. The owner is read,
// most preferred last (each rule overrides the one before), from a signed
// download link's o parameter, the session cookie `<owner>.<secret>`, the
// bearer token `dd_<owner>.<secret>`, and X-On-Behalf-Of when it holds a
// user id. The owners' backend hashes onto servers that are the proxy's
// own, one per node, never down, so an owner's place on the ring never
// changes; each forwards to its node through a backend that checks
// /healthz every second: a node that stops answering (dead or hung) is
// marked down after two checks of up to 2 s each, about 6 s, the calls it
// was serving are
// ended, and its owners get a JSON 503 until it is back, while no other
// node gets them (it does not hold their files). Requests that carry no owner (sign-in, /healthz, the
// web page's first request, the tool list) go to a second backend of the
// same nodes that checks /healthz and skips a node that is down. Errors
// of the proxy's own are JSON; requests are logged to stdout; the stats
// page listens on cfg.Stats, with HAProxy's Prometheus exporter at
// /metrics there; X-Forwarded-For is the client's address, whatever the
// client sent.
func HAProxyConfig(r *Ring, cfg ProxyConfig) (string, error) {
	if _, _, err := net.SplitHostPort(cfg.Bind); err != nil {
		return "", fmt.Errorf("cluster: proxy bind %q: want host:port: %w", cfg.Bind, err)
	}
	if cfg.Stats == "" {
		cfg.Stats = "127.0.0.1:8404"
	}
	if _, _, err := net.SplitHostPort(cfg.Stats); err != nil {
		return "", fmt.Errorf("cluster: proxy stats %q: want host:port: %w", cfg.Stats, err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 300
	}
	var b strings.Builder
	fmt.Fprintf(&b, `global
  # An owner's request holds two sessions: the frontend's and its node's.
  maxconn 8192
  log stdout format raw local0

defaults
  mode http
  log global
  option httplog
  option dontlognull
  retries 2
  timeout connect 5s
  timeout client %[1]ds
  timeout server %[1]ds
  timeout http-request 10s
  timeout check 2s
`, timeout)
	for _, e := range proxyErrors {
		fmt.Fprintf(&b, "  http-error status %d content-type application/json string '{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}'\n",
			e.status, e.code, e.text)
	}
	fmt.Fprintf(&b, `
frontend datadesk
  bind %[1]s
  # The nodes count sign-in failures by client address: they read it from
  # this header, set here whatever the client sent, and trust it only from
  # this proxy's address (serve --trusted-proxies).
  http-request set-header X-Forwarded-For %%[src]
  http-request set-var(txn.owner) url_param(o) if { url_param(o) -m reg '^%[2]s$' }
  http-request set-var(txn.owner) req.cook(datadesk_session),bytes(0,%[3]d) if { req.cook(datadesk_session) -m reg '^%[2]s[.]' }
  http-request set-var(txn.owner) req.hdr(Authorization),bytes(10,%[3]d) if { req.hdr(Authorization) -m reg '^Bearer dd_%[2]s[.]' }
  http-request set-var(txn.owner) req.hdr(X-On-Behalf-Of) if { req.hdr(X-On-Behalf-Of) -m reg '^%[2]s$' }
  # Metrics are each node's own, scraped on the node.
  http-request deny deny_status 404 if { path /metrics }
  use_backend nodes if { var(txn.owner) -m found }
  default_backend any

backend nodes
  balance hash var(txn.owner)
  hash-type consistent sdbm avalanche
`, cfg.Bind, ownerIDRe, ownerIDLen)
	for _, n := range r.nodes {
		fmt.Fprintf(&b, "  server %s abns@%s id %d weight %d\n", n.Name, nodeSocket(cfg.Bind, n), n.ID, ServerWeight)
	}
	for _, n := range r.nodes {
		fmt.Fprintf(&b, `
# %[1]s's owners: checked, and a 503 while it does not answer.
listen node_%[1]s
  bind abns@%[2]s
  # The request is logged by the frontend; here only what went wrong.
  option dontlog-normal
  option httpchk GET /healthz
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
  server %[1]s %[3]s check
`, n.Name, nodeSocket(cfg.Bind, n), n.Addr)
	}
	b.WriteString(`
backend any
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server inter 1s fall 2 rise 1
`)
	for _, n := range r.nodes {
		fmt.Fprintf(&b, "  server %s %s id %d check\n", n.Name, n.Addr, n.ID)
	}
	fmt.Fprintf(&b, `
# The stats page, and the proxy's own metrics for Prometheus at /metrics:
# what callers see (each node_NAME's 503s while its node is down) and
# whether each node is marked down.
listen stats
  bind %s
  http-request use-service prometheus-exporter if { path /metrics }
  stats enable
  stats uri /
  stats refresh 10s
`, cfg.Stats)
	return b.String(), nil
}
