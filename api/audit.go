package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk/rbac"
)

// audited records every request under /v1 once it is answered: who (and for
// whom), what, the policy's decision and reason, the outcome, the duration,
// and a hash of a tool call's arguments. A request whose record would find
// no room (rbac.Audit.Ready: a full disk) is refused before it runs, unrecorded,
// but for a delete.
func (s *Server) audited(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		start := s.cfg.Now()
		// A delete runs on the room left: it is how space is freed.
		if err := s.audit.Ready(); err != nil && !deletes(c) {
			// Its record would take the room kept for the calls running.
			s.cfg.Logger.Warn("request refused: the audit log has no room", "method", methodLabel(c.Request().Method), "path", c.Path())
			return err
		}
		err := next(c)
		if done, _ := c.Get(auditedKey).(bool); done {
			return err
		}
		who := caller(c)
		e := rbac.Entry{Time: start.UTC(), UserID: who.UserID, User: who.Name, ActorID: who.ActorID, Actor: who.ActorName,
			ChatSession: who.ChatSession, DurationMS: float64(s.cfg.Now().Sub(start).Microseconds()) / 1000,
			Target: c.Param("id")}
		e.Action, _ = c.Get(actionKey).(string)
		if e.Action == "" {
			e.Action = methodLabel(c.Request().Method) + " " + c.Path()
		}
		if d, ok := c.Get(decisionKey).(rbac.Decision); ok {
			e.Decision, e.Reason = d.Effect, d.Reason
		}
		e.ApprovalID, _ = c.Get(approvalKey).(string)
		switch {
		case err != nil:
			status, code := errorStatus(err)
			e.Outcome, e.Status = string(code), status
		default:
			if r, _ := echo.UnwrapResponse(c.Response()); r != nil {
				e.Status = r.Status
			}
			e.Outcome = "ok"
			if e.Status == http.StatusAccepted {
				e.Outcome = "pending"
			}
		}
		s.record(e)
		return err
	}
}

// deletes reports whether a request deletes a file, which frees space.
func deletes(c *echo.Context) bool {
	return c.Request().Method == http.MethodDelete || strings.HasSuffix(c.Path(), "/delete")
}

// record writes an audit entry; one that cannot be written is counted and
// logged (Ready refuses the calls that follow once room runs out).
func (s *Server) record(e rbac.Entry) {
	if err := s.audit.Record(e); err != nil {
		s.metrics.auditFailures.Inc()
		s.cfg.Logger.Error("audit record failed", "action", e.Action, "user", e.UserID, "err", err)
	}
}
