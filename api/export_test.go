package api

import (
	"context"
	"io"
	"time"

	"datadesk/cluster"
	"datadesk/exports"
	"datadesk/rbac"
	"datadesk/toolcall"

	"github.com/labstack/echo/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The server's limits and parts that this package's external tests reach.
const (
	BodiesPerNode          = bodiesPerNode
	BodiesPerUser          = bodiesPerUser
	BodyMinRate            = bodyMinRate
	SignInFreeFailures     = signInFreeFailures
	SignInFreeAddrFailures = signInFreeAddrFailures
	SessionCookie          = sessionCookie
	SignInPairBurst        = signInPairBurst
)

func (s *Server) Receive(part io.Reader, dir string) (string, int64, string, error) {
	return s.receive(part, dir)
}

func (s *Server) StreamExport(c *echo.Context, format, name string, src exports.Source, opts exports.Options) error {
	return s.streamExport(c, format, name, src, opts)
}

func (s *Server) Echo() *echo.Echo                     { return s.echo }
func (s *Server) Calls() *toolcall.Pipeline            { return s.calls }
func (s *Server) Cfg() *Config                         { return &s.cfg }
func (s *Server) MembersRef() **cluster.Members        { return &s.members }
func (s *Server) AuditRef() **rbac.Audit               { return &s.audit }
func (s *Server) BodyIdleRef() *time.Duration          { return &s.bodyIdle }
func (s *Server) BodyGraceRef() *time.Duration         { return &s.bodyGrace }
func (s *Server) SetBodiesWait(d time.Duration)        { s.bodies.wait = d }
func (s *Server) BodiesHeld() int                      { return len(s.bodies.node) }
func (s *Server) RequestBytes() *prometheus.CounterVec { return s.metrics.requestBytes }

func (s *Server) Gather() ([]*dto.MetricFamily, error) { return s.metrics.reg.Gather() }

func (s *Server) EnterBodies(ctx context.Context, user string) (func(), error) {
	return s.bodies.enter(ctx, user)
}
