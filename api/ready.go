package api

import (
	"context"
	"fmt"
	"net/http"
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
// answer, else 503; /healthz stays a liveness check.
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
	return c.JSON(status, map[string]any{"status": state, "checks": out})
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
