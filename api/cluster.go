package api

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/cluster"
	"datadesk/serverdb"
)

// Headers of requests between the nodes of a cluster. A node forwards a
// request only with the cluster key, and names the caller it has already
// authenticated.
const (
	clusterKeyHeader   = "X-Datadesk-Cluster-Key"
	forwardedForHeader = "X-Datadesk-Caller"
	forwardedActHeader = "X-Datadesk-Actor"
	forwardedKey       = "datadesk.forwarded"
	// peerTimeout bounds one request to another node.
	peerTimeout = 60 * time.Second
	// maxPeerAnswer bounds the body read back from another node.
	maxPeerAnswer = 8 << 20
)

// ClusterConfig places a server among several nodes behind a proxy that
// sends each owner's requests to the node the ring gives it.
type ClusterConfig struct {
	// Ring is the member list the proxy has; Self is this node's name on it.
	Ring *cluster.Ring
	Self string
	// Key authenticates requests between nodes; the same random bytes on
	// every node, at least 32.
	Key []byte
	// Shared is the directory every node shares; a change of member list
	// under way (cluster.PlacementFile) is read from it.
	Shared string
}

// clustered reports whether the server is one node of several.
func (s *Server) clustered() bool { return s.cfg.Cluster.Ring != nil }

// ownerHere refuses a request whose owner this node does not hold: the
// proxy sent it to the wrong node, and answering from here would show an
// empty account. Errors: misdirected (421).
func (s *Server) ownerHere(c *echo.Context, owner string) error {
	if !s.clustered() || owner == "" || c.Get(forwardedKey) == true {
		return nil
	}
	n, ok := s.holder(owner)
	switch {
	case !ok:
		return moving(c, n)
	case n.Name != s.cfg.Cluster.Self:
		return datadesk.Errorf(datadesk.Misdirected, "this node does not hold the account; its requests belong on node %s", n.Name)
	}
	return nil
}

// fromPeer authenticates a request another node forwarded: the cluster key
// and the caller that node authenticated. ok is false when the request
// carries no cluster key. Errors: unauthenticated.
func (s *Server) fromPeer(c *echo.Context) (datadesk.Caller, bool, error) {
	r := c.Request()
	key := r.Header.Get(clusterKeyHeader)
	if key == "" || !s.clustered() {
		return datadesk.Caller{}, false, nil
	}
	if subtle.ConstantTimeCompare([]byte(key), []byte(hex.EncodeToString(s.cfg.Cluster.Key))) != 1 {
		return datadesk.Caller{}, true, datadesk.Errorf(datadesk.Unauthenticated, "the cluster key is not valid")
	}
	user, err := s.users.ByID(r.Header.Get(forwardedForHeader))
	if err != nil {
		return datadesk.Caller{}, true, datadesk.Errorf(datadesk.Unauthenticated, "the forwarded caller does not exist")
	}
	who := datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role}
	if id := r.Header.Get(forwardedActHeader); id != "" {
		actor, err := s.users.ByID(id)
		if err != nil {
			return datadesk.Caller{}, true, datadesk.Errorf(datadesk.Unauthenticated, "the forwarded acting account does not exist")
		}
		who.ActorID, who.ActorName, who.ActorRole = actor.ID, actor.Name, actor.Role
	}
	c.Set(forwardedKey, true)
	return who, true, nil
}

// peerAnswer is another node's answer to a forwarded request.
type peerAnswer struct {
	status int
	body   []byte
}

// toPeer sends a request to another node as the caller, with the cluster
// key. path includes the query.
func (s *Server) toPeer(ctx context.Context, n cluster.Node, who datadesk.Caller, method, path string, body []byte) (peerAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, peerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+n.Addr+path, bytes.NewReader(body))
	if err != nil {
		return peerAnswer{}, err
	}
	req.Header.Set(clusterKeyHeader, hex.EncodeToString(s.cfg.Cluster.Key))
	req.Header.Set(forwardedForHeader, who.UserID)
	if who.ActorID != "" {
		req.Header.Set(forwardedActHeader, who.ActorID)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.peers.Do(req)
	if err != nil {
		return peerAnswer{}, datadesk.Errorf(datadesk.Unavailable, "node %s (%s) cannot be reached; try again once it is back", n.Name, n.Addr).WithCause(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxPeerAnswer))
	if err != nil {
		return peerAnswer{}, datadesk.Errorf(datadesk.Unavailable, "node %s (%s) stopped answering; try again once it is back", n.Name, n.Addr).WithCause(err)
	}
	return peerAnswer{status: res.StatusCode, body: b}, nil
}

// otherNodes returns every node but this one.
func (s *Server) otherNodes() []cluster.Node {
	var out []cluster.Node
	for _, n := range s.members.Nodes() {
		if n.Name != s.cfg.Cluster.Self {
			out = append(out, n)
		}
	}
	return out
}

// fanOut reports whether a request should be asked of the other nodes too:
// in a cluster, when it did not itself come from one.
func (s *Server) fanOut(c *echo.Context) bool {
	return s.clustered() && c.Get(forwardedKey) != true
}

// approvalElsewhere asks the other nodes for an approval this node does
// not hold, repeating the request (get, approve or reject) as the caller on
// the node that holds it: a call is decided and run where its caller's
// queue and data are. It answers that node's answer, or not_found.
func (s *Server) approvalElsewhere(c *echo.Context, notFound error) error {
	r := c.Request()
	for _, n := range s.otherNodes() {
		ans, err := s.toPeer(r.Context(), n, caller(c), r.Method, r.URL.RequestURI(), nil)
		if err != nil {
			return err
		}
		if ans.status != http.StatusNotFound {
			return c.Blob(ans.status, echo.MIMEApplicationJSON, ans.body)
		}
	}
	return notFound
}

// decideElsewhere approves or rejects, from the web page, a call another
// node holds: the API's decision on that node, as the approver. It returns
// the decided approval, or the node's error, or notFound when no node
// holds it.
func (s *Server) decideElsewhere(c *echo.Context, approve bool, notFound error) (*serverdb.Approval, error) {
	verb := "reject"
	if approve {
		verb = "approve"
	}
	path := "/v1/approvals/" + c.Param("id") + "/" + verb
	for _, n := range s.otherNodes() {
		ans, err := s.toPeer(c.Request().Context(), n, caller(c), http.MethodPost, path, nil)
		if err != nil {
			return nil, err
		}
		if ans.status == http.StatusNotFound {
			continue
		}
		var out struct {
			Approval *serverdb.Approval `json:"approval"`
			Error    *errorBody         `json:"error"`
		}
		if err := json.Unmarshal(ans.body, &out); err != nil {
			return nil, datadesk.Errorf(datadesk.Internal, "node %s sent an answer that does not read", n.Name).WithCause(err)
		}
		if out.Error != nil {
			return nil, &datadesk.Error{Code: out.Error.Code, Message: out.Error.Message, Field: out.Error.Field, Allowed: out.Error.Allowed}
		}
		if out.Approval == nil {
			return nil, datadesk.Errorf(datadesk.Internal, "node %s answered %d without an approval", n.Name, ans.status)
		}
		return out.Approval, nil
	}
	return nil, notFound
}

// peerListTimeout bounds how long an approval list waits for another
// node: a hung node costs the list seconds, and the list says it is
// missing.
const peerListTimeout = 3 * time.Second

// unansweredKey holds, in a request, the nodes whose queues an approval
// list could not read.
const unansweredKey = "approvals.unanswered"

// unanswered are the nodes whose queues a merged list lacks.
func unanswered(c *echo.Context) []string {
	missing, _ := c.Get(unansweredKey).([]string)
	return missing
}

// peerApprovals returns the first n approvals of the other nodes' queues
// that the caller may see, with the filter's status, asking them at once,
// each for at most peerListTimeout; a node that does not answer in time,
// or answers wrong, is left out and named in the request
// (unansweredKey), so the list answers with what it has.
func (s *Server) peerApprovals(c *echo.Context, status string, n int) ([]serverdb.Approval, bool) {
	nodes := s.otherNodes()
	type answer struct {
		list []serverdb.Approval
		more bool
		err  error
	}
	answers := make([]answer, len(nodes))
	var wg sync.WaitGroup
	for i, node := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(c.Request().Context(), peerListTimeout)
			defer cancel()
			path := fmt.Sprintf("/v1/approvals?limit=%d&status=%s", n, status)
			ans, err := s.toPeer(ctx, node, caller(c), http.MethodGet, path, nil)
			switch {
			case err != nil:
				answers[i].err = err
				return
			case ans.status != http.StatusOK:
				answers[i].err = fmt.Errorf("answered %d", ans.status)
				return
			}
			var page struct {
				Approvals []serverdb.Approval `json:"approvals"`
				More      bool                `json:"has_more"`
			}
			if err := json.Unmarshal(ans.body, &page); err != nil {
				answers[i].err = err
				return
			}
			answers[i] = answer{list: page.Approvals, more: page.More}
		})
	}
	wg.Wait()
	var all []serverdb.Approval
	var missing []string
	more := false
	for i, a := range answers {
		if a.err != nil {
			s.cfg.Logger.Warn("approval list: a node did not answer", "node", nodes[i].Name, "err", a.err)
			missing = append(missing, nodes[i].Name)
			continue
		}
		all = append(all, a.list...)
		more = more || a.more
	}
	if len(missing) > 0 {
		c.Set(unansweredKey, missing)
	}
	return all, more
}

// mergeApprovals orders the approvals of every node newest first, as one
// queue does, and cuts the page.
func mergeApprovals(list []serverdb.Approval, offset, limit int) ([]serverdb.Approval, bool) {
	slices.SortStableFunc(list, func(a, b serverdb.Approval) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	if offset >= len(list) {
		return []serverdb.Approval{}, false
	}
	list = list[offset:]
	if len(list) > limit {
		return list[:limit], true
	}
	return list, false
}

// createSession starts a web session on the node that holds the user: on
// this one, or through the other node's cluster route, since the proxy
// sends the session cookie's requests to that node alone.
func (s *Server) createSession(c *echo.Context, userID string) (string, *serverdb.Session, error) {
	ctx := c.Request().Context()
	if !s.clustered() {
		return s.newSession(ctx, userID)
	}
	n, ok := s.holder(userID)
	if !ok {
		return "", nil, datadesk.Errorf(datadesk.Unavailable, "this account is moving to node %s; sign in again in a moment", n.Name)
	}
	if n.Name == s.cfg.Cluster.Self {
		return s.newSession(ctx, userID)
	}
	ans, err := s.toPeer(ctx, n, datadesk.Caller{UserID: userID}, http.MethodPost, "/v1/cluster/sessions", nil)
	if err != nil {
		return "", nil, err
	}
	var out peerSession
	if ans.status != http.StatusCreated {
		return "", nil, datadesk.Errorf(datadesk.Internal, "node %s answered %d to a new session", n.Name, ans.status)
	}
	if err := json.Unmarshal(ans.body, &out); err != nil {
		return "", nil, datadesk.Errorf(datadesk.Internal, "node %s sent a session that does not read", n.Name).WithCause(err)
	}
	return out.Token, &serverdb.Session{UserID: userID, CSRF: out.CSRF, ExpiresAt: out.ExpiresAt}, nil
}

// newSession starts a session on this node in the user's present epoch.
func (s *Server) newSession(ctx context.Context, userID string) (string, *serverdb.Session, error) {
	user, err := s.users.ByID(userID)
	if err != nil {
		return "", nil, err
	}
	return s.system.CreateSession(ctx, userID, user.SessionEpoch, s.cfg.Now(), SessionTTL)
}

type peerSession struct {
	Token     string    `json:"token"`
	CSRF      string    `json:"csrf_token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// clusterSession starts a session for a user this node holds, asked by the
// node where they signed in. Only another node may ask. Errors: not_found
// (not from a node).
func (s *Server) clusterSession(c *echo.Context) error {
	if c.Get(forwardedKey) != true {
		return datadesk.Errorf(datadesk.NotFound, "no such route")
	}
	who := caller(c)
	if n, ok := s.holder(who.UserID); !ok {
		return moving(c, n)
	} else if n.Name != s.cfg.Cluster.Self {
		return datadesk.Errorf(datadesk.Misdirected, "this node does not hold the account; it belongs on node %s", n.Name)
	}
	c.Set(actionKey, "session.sign_in")
	token, sess, err := s.newSession(c.Request().Context(), who.UserID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, peerSession{Token: token, CSRF: sess.CSRF, ExpiresAt: sess.ExpiresAt})
}
