package api

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/cluster"
	"datadesk/handoff"
	"datadesk/links"
	"datadesk/serverdb"
)

// relayedHeader marks a request one node passed to another because the
// owner had moved: the node it reaches answers it or refuses it, never
// passes it on again.
const relayedHeader = "X-Datadesk-Relayed"

// DefaultDrain bounds how long a move waits for an owner's running calls.
const DefaultDrain = 30 * time.Second

// holder returns the node that holds owner now: ok is false while the
// owner moves between nodes.
func (s *Server) holder(owner string) (cluster.Node, bool) {
	return s.members.Holder(owner)
}

// moving answers a call of an owner that no node holds for the moment of
// its move: 503, to be tried again in a second.
func moving(c *echo.Context, to cluster.Node) error {
	c.Response().Header().Set("Retry-After", "1")
	return datadesk.Errorf(datadesk.Unavailable, "this account is moving to node %s; try again in a moment", to.Name)
}

// relay passes a request whose owner moved from this node to another to
// that node, whole, before anything here reads it: after a change of
// member list, until the proxy has the new one, requests reach an owner's
// old node. The owner is read from the credentials as the proxy reads it.
func (s *Server) relay(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		r := c.Request()
		if !s.clustered() || r.Header.Get(clusterKeyHeader) != "" || r.Header.Get(relayedHeader) != "" {
			return next(c)
		}
		owner := requestOwner(r)
		if owner == "" {
			return next(c)
		}
		n, ok := s.holder(owner)
		switch {
		case !ok:
			return moving(c, n)
		case n.Name == s.cfg.Cluster.Self:
			return next(c)
		case s.members.Before(owner).Name != s.cfg.Cluster.Self:
			// Not a request a proxy with the old list sends here: the
			// authenticated request is refused as misdirected.
			return next(c)
		}
		rp := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.Out.URL.Scheme, pr.Out.URL.Host = "http", n.Addr
				pr.Out.Host = r.Host
				pr.Out.Header.Set(relayedHeader, s.cfg.Cluster.Self)
				pr.SetXForwarded()
				// The client address this node trusts, not the header as sent.
				pr.Out.Header.Set("X-Forwarded-For", c.RealIP())
			},
			FlushInterval: -1,
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				s.cfg.Logger.Warn("relay to the owner's node failed", "node", n.Name, "err", err)
				s.handleError(c, datadesk.Errorf(datadesk.Unavailable, "node %s (%s), which holds the account, cannot be reached; try again once it is back", n.Name, n.Addr).WithCause(err))
			},
		}
		rp.ServeHTTP(c.Response(), r)
		return nil
	}
}

// requestOwner reads the owner a request's credentials name, as the
// proxy does, the most preferred last: a signed link's o, the session
// cookie `<owner>.<secret>`, the bearer token `dd_<owner>.<secret>`, and
// X-On-Behalf-Of when it holds a user id.
func requestOwner(r *http.Request) string {
	owner := ""
	if o := r.URL.Query().Get(links.OwnerParam); cluster.IsOwnerID(o) {
		owner = o
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if id, _, ok := strings.Cut(ck.Value, "."); ok && cluster.IsOwnerID(id) {
			owner = id
		}
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer dd_"); ok {
		if id, _, ok := strings.Cut(tok, "."); ok && cluster.IsOwnerID(id) {
			owner = id
		}
	}
	if o := r.Header.Get(onBehalfHeader); cluster.IsOwnerID(o) {
		owner = o
	}
	return owner
}

// peerOnly admits requests that carry the cluster key: the routes by
// which `datadesk nodes apply` moves owners. Anyone else finds no route.
func (s *Server) peerOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		key := c.Request().Header.Get(clusterKeyHeader)
		if !s.clustered() || key == "" {
			return datadesk.Errorf(datadesk.NotFound, "no such route")
		}
		if subtle.ConstantTimeCompare([]byte(key), []byte(hex.EncodeToString(s.cfg.Cluster.Key))) != 1 {
			return datadesk.Errorf(datadesk.Unauthenticated, "the cluster key is not valid")
		}
		return next(c)
	}
}

// reloadPlacement rereads the member list and the owners' moves from the
// shared directory and answers the version it holds.
func (s *Server) reloadPlacement(c *echo.Context) error {
	v, err := s.members.Reload()
	if err != nil {
		return datadesk.Errorf(datadesk.Unavailable, "the placement in the shared directory cannot be read; try again once an operator has fixed it").WithCause(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"node": s.cfg.Cluster.Self, "version": v})
}

// handoffOwner reads the :id of a move's route.
func handoffOwner(c *echo.Context) (string, error) {
	owner := c.Param("id")
	if !cluster.IsOwnerID(owner) {
		return "", datadesk.Errorf(datadesk.Invalid, "%q is not a user id", owner).WithField("id")
	}
	return owner, nil
}

// sendOwner withholds an owner and streams its move: the node it leaves.
// A failure after the first byte cuts the connection, so the receiving
// node never takes a cut stream for a whole one.
func (s *Server) sendOwner(c *echo.Context) error {
	owner, err := handoffOwner(c)
	if err != nil {
		return err
	}
	drain := DefaultDrain
	if d, err := time.ParseDuration(c.QueryParam("drain")); err == nil && d > 0 {
		drain = d
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), drain)
	err = s.engine.Withhold(ctx, owner)
	cancel()
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Type", "application/x-tar")
	w := &startWriter{rw: c.Response()}
	sum, err := handoff.Send(c.Request().Context(), w, s.engine, ownerRecords{s.system}, owner)
	if err != nil && !w.started {
		c.Response().Header().Del("Content-Type")
		return err
	}
	if err != nil {
		s.cfg.Logger.Error("an owner's move failed after its first byte; the connection is cut", "owner", owner, "err", err)
		panic(http.ErrAbortHandler)
	}
	w.start()
	s.cfg.Logger.Info("owner sent to another node", "owner", owner, "files", sum.Files, "bytes", sum.Bytes, "approvals", sum.Approvals)
	return nil
}

// receiveOwner takes an owner's move stream: the node it joins.
func (s *Server) receiveOwner(c *echo.Context) error {
	owner, err := handoffOwner(c)
	if err != nil {
		return err
	}
	if n, _ := s.holder(owner); n.Name != s.cfg.Cluster.Self {
		return datadesk.Errorf(datadesk.Conflict, "the placement gives the account to node %s, not this one", n.Name)
	}
	sum, err := handoff.Receive(c.Request().Context(), c.Request().Body, s.engine, ownerRecords{s.system}, owner)
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("owner received from another node", "owner", owner, "files", sum.Files, "bytes", sum.Bytes, "approvals", sum.Approvals)
	return c.JSON(http.StatusOK, sum)
}

// resumeOwner puts an owner whose move was given up back in service here.
func (s *Server) resumeOwner(c *echo.Context) error {
	owner, err := handoffOwner(c)
	if err != nil {
		return err
	}
	s.engine.Admit(owner)
	return c.NoContent(http.StatusNoContent)
}

// releaseOwner forgets an owner another node holds now: its folder,
// sessions and approvals here. Errors: conflict when the placement still
// gives the owner to this node.
func (s *Server) releaseOwner(c *echo.Context) error {
	owner, err := handoffOwner(c)
	if err != nil {
		return err
	}
	if _, err := s.members.Reload(); err != nil {
		return datadesk.Errorf(datadesk.Unavailable, "the placement in the shared directory cannot be read; try again once an operator has fixed it").WithCause(err)
	}
	if n, ok := s.holder(owner); !ok || n.Name == s.cfg.Cluster.Self {
		return datadesk.Errorf(datadesk.Conflict, "the placement does not give the account to another node yet")
	}
	if err := s.engine.Withhold(c.Request().Context(), owner); err != nil {
		return err
	}
	if err := s.engine.DropOwner(owner); err != nil {
		return err
	}
	if err := s.system.DropOwner(c.Request().Context(), owner); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ownerRecords carries an owner's web sessions and approvals in a move,
// as JSON.
type ownerRecords struct{ db *serverdb.DB }

func (o ownerRecords) Export(ctx context.Context, owner string) ([]byte, handoff.Counts, error) {
	rec, err := o.db.OwnerRecords(ctx, owner)
	if err != nil {
		return nil, handoff.Counts{}, err
	}
	b, err := json.Marshal(rec)
	return b, recordCounts(rec), err
}

func (o ownerRecords) Import(ctx context.Context, owner string, b []byte) (handoff.Counts, error) {
	var rec serverdb.OwnerRecords
	if err := json.Unmarshal(b, &rec); err != nil {
		return handoff.Counts{}, datadesk.Errorf(datadesk.Invalid, "the records of %s in the move do not read", owner).WithCause(err)
	}
	return recordCounts(&rec), o.db.PutOwnerRecords(ctx, owner, &rec)
}

func recordCounts(r *serverdb.OwnerRecords) handoff.Counts {
	return handoff.Counts{Sessions: len(r.Sessions), Approvals: len(r.Approvals), Pending: r.Pending()}
}
