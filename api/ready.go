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

// readyCheck is one dependency in /readyz's answer.
type readyCheck struct {
	Name  string  `json:"name"`
	OK    bool    `json:"ok"`
	Error string  `json:"error,omitempty"`
	MS    float64 `json:"ms"`
}

// readyz says whether this node can serve its own owners now, dependency
// by dependency: owners' storage (writable, with ReadyMinFree bytes free),
// the server's own database, the shared directory, each ClickHouse node
// and, for replicated tables, ZooKeeper through ClickHouse. The probes run
// at once, each with its own deadline, so a hung dependency is the one
// blamed. 200 when all answer, else 503. Peer nodes are reported apart
// ("peers") and never fail it: a proxy routes a node's owners by it, and
// a dead peer does not stop this node serving its own. /healthz stays a
// liveness check. The checks name addresses and carry error texts, so
// only a caller on this machine or a trusted proxy's own health check
// sees them (checkedHere); a request passed on by the proxy, which names
// its client in X-Forwarded-For, gets the status alone.
func (s *Server) readyz(c *echo.Context) error {
	ctx := c.Request().Context()
	minFree := s.cfg.ReadyMinFree
	if minFree == 0 {
		minFree = DefaultReadyMinFree
	}
	probes := append(s.engine.Probes(minFree), catalog.Probe{Name: "server database", Run: s.system.Ping})
	if s.cfg.SharedDir != "" {
		probes = append(probes, catalog.Probe{Name: "shared directory", Run: func(context.Context) error { return engine.RoomIn(s.cfg.SharedDir, minFree) }})
	}
	var checks, peers []catalog.Check
	done := make(chan struct{})
	go func() {
		peers = catalog.RunProbes(ctx, s.peerProbes(), readyProbeTimeout)
		close(done)
	}()
	checks = catalog.RunProbes(ctx, probes, readyProbeTimeout)
	<-done
	status, state := http.StatusOK, "ready"
	out := readyChecks(checks)
	for _, ch := range out {
		if !ch.OK {
			status, state = http.StatusServiceUnavailable, "unavailable"
		}
	}
	if !s.checkedHere(c.Request()) {
		return c.JSON(status, map[string]any{"status": state})
	}
	body := map[string]any{"status": state, "checks": out}
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
			out[i].Error = ch.Err.Error()
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
