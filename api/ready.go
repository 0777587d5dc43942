package api

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk/engine"
	"datadesk/engine/catalog"
)

// readyProbeTimeout bounds each of a readiness check's probes; they run
// at once, so /readyz answers within it whatever hangs.
const readyProbeTimeout = 2 * time.Second

// DefaultReadyMinFree is the free space the data and shared directories
// need for /readyz to answer ready: a node about to run out stops taking
// owners' calls before a load fails half-way.
const DefaultReadyMinFree = 1 << 30

// readyCheck is one dependency in /readyz's answer; Degrades says what
// does not work while it fails, when the node serves on without it.
type readyCheck struct {
	Name     string  `json:"name"`
	OK       bool    `json:"ok"`
	Error    string  `json:"error,omitempty"`
	Degrades string  `json:"degrades,omitempty"`
	MS       float64 `json:"ms"`
}

// The states /readyz answers: every dependency answers; the node serves
// its owners but something does not work (a ClickHouse shard, ZooKeeper);
// the node cannot serve its owners (their storage, the server's database
// or the shared directory fails).
const (
	stateReady    = "ready"
	stateDegraded = "degraded"
	stateNotReady = "not_ready"
)

// readiness runs the readiness probes at once, each within its deadline,
// and says the node's state.
func (s *Server) readiness(ctx context.Context) (string, []catalog.Check) {
	minFree := s.cfg.ReadyMinFree
	if minFree == 0 {
		minFree = DefaultReadyMinFree
	}
	probes := append(s.engine.Probes(minFree), catalog.Probe{Name: "server database", Run: s.system.Ping})
	if s.cfg.SharedDir != "" {
		probes = append(probes, catalog.Probe{Name: "shared directory", Run: func(context.Context) error { return engine.RoomIn(s.cfg.SharedDir, minFree) }})
	}
	checks := catalog.RunProbes(ctx, probes, readyProbeTimeout)
	state := stateReady
	for _, ch := range checks {
		switch {
		case ch.Err == nil:
		case ch.Degrades == "":
			return stateNotReady, checks
		default:
			state = stateDegraded
		}
	}
	return state, checks
}

// readyz says whether this node can serve its own owners now: ready (200)
// when every dependency answers; degraded (200) when it serves them but
// something does not work (a ClickHouse shard or ZooKeeper: tables in
// DuckDB answer), each named in "degraded" with what does not work; not
// ready (503) when their storage (writable, with ReadyMinFree bytes free),
// the server's database or the shared directory fails. The probes run at
// once, each with its own deadline, so a hung dependency is the one
// blamed. Peer nodes are reported apart ("peers") and never change it: a
// dead peer does not stop this node serving its own. /healthz is what a
// proxy routes by; this is what pages a person. The checks name addresses
// and carry error texts, so only a caller on this machine or a trusted
// proxy's own health check sees them (checkedHere); a request passed on
// by the proxy, which names its client in X-Forwarded-For, gets the state
// alone.
func (s *Server) readyz(c *echo.Context) error {
	ctx := c.Request().Context()
	var peers []catalog.Check
	done := make(chan struct{})
	go func() {
		peers = catalog.RunProbes(ctx, s.peerProbes(), readyProbeTimeout)
		close(done)
	}()
	state, checks := s.readiness(ctx)
	<-done
	status := http.StatusOK
	if state == stateNotReady {
		status = http.StatusServiceUnavailable
	}
	if !s.checkedHere(c.Request()) {
		return c.JSON(status, map[string]any{"status": state})
	}
	body := map[string]any{"status": state, "checks": readyChecks(checks)}
	var degraded []string
	for _, ch := range checks {
		if ch.Err != nil && ch.Degrades != "" {
			degraded = append(degraded, ch.Name+": "+ch.Degrades)
		}
	}
	if degraded != nil {
		body["degraded"] = degraded
	}
	if s.clustered() {
		body["peers"] = readyChecks(peers)
	}
	return c.JSON(status, body)
}

func readyChecks(checks []catalog.Check) []readyCheck {
	out := make([]readyCheck, len(checks))
	for i, ch := range checks {
		out[i] = readyCheck{Name: ch.Name, OK: ch.Err == nil, MS: float64(ch.Took.Microseconds()) / 1000}
		if ch.Err != nil {
			out[i].Error, out[i].Degrades = ch.Err.Error(), ch.Degrades
		}
	}
	return out
}

// checkedHere reports whether a request comes straight from this machine
// or from a trusted proxy itself, not passed on for a client.
func (s *Server) checkedHere(r *http.Request) bool {
	if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr := ap.Addr().Unmap()
	if addr.IsLoopback() {
		return true
	}
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// peerProbes ask each other node of a cluster for its /healthz.
func (s *Server) peerProbes() []catalog.Probe {
	if !s.clustered() {
		return nil
	}
	var out []catalog.Probe
	for _, n := range s.members.Nodes() {
		if n.Name == s.cfg.Cluster.Self {
			continue
		}
		out = append(out, catalog.Probe{Name: "node " + n.Name + " (" + n.Addr + ")", Run: func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.Addr+"/healthz", nil)
			if err != nil {
				return err
			}
			resp, err := s.peers.Do(req)
			if err != nil {
				return fmt.Errorf("cannot be reached: %w", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("answered %d", resp.StatusCode)
			}
			return nil
		}})
	}
	return out
}
