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

// readyTimeout bounds all of a readiness check's probes together.
const readyTimeout = 3 * time.Second

// readyCheck is one dependency in /readyz's answer.
type readyCheck struct {
	Name  string  `json:"name"`
	OK    bool    `json:"ok"`
	Error string  `json:"error,omitempty"`
	MS    float64 `json:"ms"`
}

// readyz says whether the server can do its work now, dependency by
// dependency: owners' storage, the server's own database, the shared
// directory, each ClickHouse shard, and each peer node. 200 when all
// answer, else 503; /healthz stays a liveness check. The checks name
// addresses and carry error texts, so only a caller on this machine or a
// trusted proxy's own health check sees them (checkedHere); a request
// passed on by the proxy, which names its client in X-Forwarded-For,
// gets the status alone.
func (s *Server) readyz(c *echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	checks := s.engine.Health(ctx)
	checks = append(checks, catalog.Timed("server database", func() error { return s.system.Ping(ctx) }))
	if s.cfg.SharedDir != "" {
		checks = append(checks, catalog.Timed("shared directory", func() error { return engine.WritableDir(s.cfg.SharedDir) }))
	}
	checks = append(checks, s.peerChecks(ctx)...)
	out := make([]readyCheck, len(checks))
	status, state := http.StatusOK, "ready"
	for i, ch := range checks {
		out[i] = readyCheck{Name: ch.Name, OK: ch.Err == nil, MS: float64(ch.Took.Microseconds()) / 1000}
		if ch.Err != nil {
			out[i].Error = ch.Err.Error()
			status, state = http.StatusServiceUnavailable, "unavailable"
		}
	}
	if !s.checkedHere(c.Request()) {
		return c.JSON(status, map[string]any{"status": state})
	}
	return c.JSON(status, map[string]any{"status": state, "checks": out})
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

// peerChecks asks each other node of a cluster for its /healthz.
func (s *Server) peerChecks(ctx context.Context) []catalog.Check {
	if !s.clustered() {
		return nil
	}
	var out []catalog.Check
	for _, n := range s.members.Nodes() {
		if n.Name == s.cfg.Cluster.Self {
			continue
		}
		out = append(out, catalog.Timed("node "+n.Name+" ("+n.Addr+")", func() error {
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
		}))
	}
	return out
}
