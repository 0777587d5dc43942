// Package api is datadesk's HTTP server: it authenticates each request
// (bearer token, cookie with CSRF, a platform acting for a user), records
// it in the audit log, bounds bodies and reads, routes an owner's requests
// to the node that holds it, and wires the surfaces (the JSON API, rest;
// the web page, web; MCP, mcpserver) in one routes file, lending them its
// shared paths (surface.Services): the owner's store, the one upload path,
// the export stream and the approvals' decisions. It holds no SQL and no
// spreadsheet code.
package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/answers"
	"datadesk/cluster"
	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/links"
	"datadesk/mcpserver"
	"datadesk/rbac"
	"datadesk/rest"
	"datadesk/serverdb"
	"datadesk/surface"
	"datadesk/toolcall"
	"datadesk/web"
)

// Defaults for Config fields left zero.
const (
	// DefaultMaxUpload bounds an upload's bytes.
	DefaultMaxUpload = 256 << 20
	// DefaultQueryTimeout bounds one files.query_table statement.
	DefaultQueryTimeout = toolcall.DefaultQueryTimeout
	// DefaultApprovalTTL is how long a call waits for a person.
	DefaultApprovalTTL = toolcall.DefaultApprovalTTL
)

// Config configures a Server.
type Config struct {
	// MaxUpload is the largest accepted upload in bytes; larger ones get 413.
	MaxUpload int64
	// QueryTimeout bounds a query; past it the call answers timeout (504).
	QueryTimeout time.Duration
	// SigningKey signs download URLs; at least 32 random bytes, kept
	// across restarts so links stay valid.
	SigningKey []byte
	// OffloadProviders are the tool providers whose big table results are
	// stored rather than passed to the model.
	OffloadProviders []string
	// ApprovalTTL is how long a call waits for approval before it expires.
	ApprovalTTL time.Duration
	// MaxPendingCall bounds the arguments of one call waiting for approval,
	// MaxPendingBytes and MaxPendingCalls one user's waiting calls
	// together; past them a call answers too_large (413).
	MaxPendingCall  int64
	MaxPendingBytes int64
	MaxPendingCalls int
	// DataDir is the data directory, where the audit log is read from.
	DataDir string
	// SharedDir holds users, the policy and the signing key; /readyz
	// checks it can be written.
	SharedDir string
	// ReadyMinFree is the free space, in bytes, the data and shared
	// directories need for /readyz to answer ready (0: DefaultReadyMinFree).
	ReadyMinFree uint64
	// Cluster places the server among several nodes; the zero value is
	// one node alone.
	Cluster ClusterConfig
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For names the client: a request from one of them counts,
	// for sign-in limits and the audit log, as coming from the nearest
	// address in the header that is not a trusted proxy. Without them the
	// header is ignored and the connection's address is the client's.
	TrustedProxies []netip.Prefix
	// MCPProgressAfter is how long a tool call over MCP runs before it
	// sends the progress notifications its client asked for
	// (mcpserver.DefaultProgressAfter when 0).
	MCPProgressAfter time.Duration
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

// Deps are the domain services the server calls.
type Deps struct {
	Engine *engine.Engine
	System *serverdb.DB
	Ingest *ingest.Ingester
	Users  *rbac.Users
	Policy *rbac.Policy
	Audit  *rbac.Audit
	// Answers keeps read-only tool calls' answers; nil keeps none.
	Answers *answers.Cache
}

// Server serves the HTTP interface.
type Server struct {
	cfg    Config
	engine *engine.Engine
	ingest *ingest.Ingester
	users  *rbac.Users
	policy *rbac.Policy
	system *serverdb.DB
	audit  *rbac.Audit
	echo   *echo.Echo
	// calls runs tool calls, whichever way they come; mcp is the MCP
	// surface.
	calls *toolcall.Pipeline
	mcp   *mcpserver.Handler
	// web is the analysts' page, rest the JSON API.
	web   *web.Handler
	rest  *rest.Handler
	links links.Signer
	// signIns counts failed sign-ins by name and client address, and
	// every sign-in's turns; signInTurns bounds those being checked per
	// address.
	signIns     *attemptLimiter
	signInTurns *gate
	// peers sends requests to the other nodes of a cluster.
	peers   *http.Client
	metrics *metrics
	// members says which node holds each owner, in a cluster.
	members *cluster.Members
	// reads and bodies bound pages of rows being read and request bodies
	// being kept, on the node and per user (gate.go).
	reads, bodies *gate
	// bodyIdle is how long a request body may send nothing; past
	// bodyGrace it must have arrived at bodyMinRate bytes a second on
	// average.
	bodyIdle, bodyGrace time.Duration
	bodyMinRate         int64
}

// New returns a Server over its dependencies.
func New(cfg Config, d Deps) (*Server, error) {
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if len(cfg.SigningKey) < 32 {
		return nil, fmt.Errorf("api: the signing key must have at least 32 bytes")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Cluster.Ring != nil {
		if _, ok := cfg.Cluster.Ring.Node(cfg.Cluster.Self); !ok {
			return nil, fmt.Errorf("api: node %q is not on the cluster's member list", cfg.Cluster.Self)
		}
		if len(cfg.Cluster.Key) < 32 {
			return nil, fmt.Errorf("api: the cluster key must have at least 32 bytes")
		}
	}
	var members *cluster.Members
	var err error
	if cfg.Cluster.Ring != nil {
		if members, err = cluster.NewMembers(cfg.Cluster.Ring, cfg.Cluster.Shared); err != nil {
			return nil, err
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, engine: d.Engine, system: d.System, ingest: d.Ingest, users: d.Users, policy: d.Policy, audit: d.Audit, members: members}
	s.links = links.Signer{Key: cfg.SigningKey, Now: cfg.Now, Routed: cfg.Cluster.Ring != nil}
	s.metrics = newMetrics(s)
	s.calls, err = toolcall.New(toolcall.Config{QueryTimeout: cfg.QueryTimeout, ApprovalTTL: cfg.ApprovalTTL,
		MaxPendingCall: cfg.MaxPendingCall, MaxPendingBytes: cfg.MaxPendingBytes, MaxPendingCalls: cfg.MaxPendingCalls,
		Links: s.links, Now: cfg.Now, Logger: cfg.Logger, Observe: s.metrics.observe},
		toolcall.Deps{Engine: d.Engine, Ingest: d.Ingest, Policy: d.Policy, Users: d.Users, Approvals: d.System,
			Audit: d.Audit, Record: s.record, Answers: d.Answers})
	if err != nil {
		return nil, err
	}
	s.signIns = newAttemptLimiter(cfg.Now)
	s.signInTurns = newGate("sign-ins", signInsChecking, signInChecksPerAddr)
	s.signInTurns.wait = signInTurnWait
	s.reads = newGate("reads of rows", readsPerNode, readsPerUser)
	s.bodies = newGate("large request bodies", bodiesPerNode, bodiesPerUser)
	s.bodyIdle, s.bodyGrace, s.bodyMinRate = bodyIdle, bodyGrace, bodyMinRate
	s.peers = &http.Client{Timeout: peerTimeout}
	if err := s.surfaces(d); err != nil {
		return nil, err
	}
	s.echo = echo.NewWithConfig(echo.Config{Logger: cfg.Logger, HTTPErrorHandler: s.handleError})
	s.echo.IPExtractor = clientAddress(cfg.TrustedProxies)
	s.routes()
	s.metrics.knowRoutes(s.echo.Router().Routes())
	return s, nil
}

// surfaces builds the MCP surface, the JSON API and the web page over the
// server's pipeline and the functions it lends them.
func (s *Server) surfaces(d Deps) error {
	l := lent{s}
	lent := surface.Services{MaxUpload: s.cfg.MaxUpload, Links: s.links, Now: s.cfg.Now,
		Access: l, Turns: l, Uploads: l, Exports: l, Approvals: l}
	s.mcp = mcpserver.NewHandler(mcpserver.Deps{Services: lent, Calls: s.calls, Engine: d.Engine, Policy: d.Policy, Users: d.Users,
		Record: s.record, Authenticate: s.authenticate, Logger: s.cfg.Logger, ProgressAfter: s.cfg.MCPProgressAfter})
	s.rest = rest.NewHandler(rest.Deps{Services: lent, Calls: s.calls,
		OffloadProviders: s.cfg.OffloadProviders, DataDir: s.cfg.DataDir, ApprovalElsewhere: s.approvalElsewhere,
		Action:   func(c *echo.Context, name string) { c.Set(actionKey, name) },
		Recorded: func(c *echo.Context) { c.Set(auditedKey, true) }})
	var err error
	s.web, err = web.NewHandler(web.Deps{Services: lent, Engine: d.Engine, Policy: d.Policy, System: d.System,
		Logger: s.cfg.Logger,
		CSRF:   csrfToken, StartSession: s.startSession, EndSession: s.endSession,
		DecideElsewhere: s.decideElsewhere})
	return err
}

// clientAddress reads a request's client address: the connection's, or,
// from a trusted proxy, the nearest untrusted one its X-Forwarded-For
// names.
func clientAddress(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// ParseTrustedProxies reads a comma-separated list of addresses and
// CIDR ranges (10.0.0.5, 10.1.0.0/16, ::1). Errors: invalid.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return nil, datadesk.Errorf(datadesk.Invalid, "trusted proxy %q is neither an address nor a CIDR range (10.0.0.5, 10.1.0.0/16)", part)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p)
	}
	return out, nil
}

// Handler returns the http.Handler of the server.
func (s *Server) Handler() http.Handler { return s.echo }

// HTTPServer returns an http.Server for addr with timeouts set: Go's
// defaults have none.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// Engine is the engine the server answers from, for the operator's
// commands a running server carries out.
func (s *Server) Engine() *engine.Engine { return s.engine }

// System is the server's own database.
func (s *Server) System() *serverdb.DB { return s.system }

// ServeMCP serves the Model Context Protocol over r and w (a process's
// stdin and stdout) for the user whose bearer token is given, until the
// client leaves or ctx ends (mcpserver.Handler.ServeStdio).
func (s *Server) ServeMCP(ctx context.Context, token string, r io.ReadCloser, w io.WriteCloser) error {
	return s.mcp.ServeStdio(ctx, token, r, w)
}
