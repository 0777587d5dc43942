package api

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"datadesk"
)

// Work that holds memory or disk while it runs is bounded on a node and
// for each user: at most node at once on the node and perUser for one
// user. A request past either waits its turn for up to gateWait, then is
// answered 503 with Retry-After: the node's memory and disk stay bounded
// whatever arrives at once, and one user's flood cannot take every turn.
const (
	// Reads of a page of rows: GET /v1/tables/{id}/rows and MCP's
	// resources/read. A page holds up to 1,000 rows of any width.
	readsPerNode, readsPerUser = 8, 4
	// Bodies kept in files while their call runs (past toolcall.BodyInMemory, up
	// to toolcall.MaxBody each) and uploads being received (up to
	// --max-upload each).
	bodiesPerNode, bodiesPerUser = 8, 2
	gateWait                     = 10 * time.Second
	// bodyIdle is how long a request body may send nothing before it is
	// dropped: a client that declares a large body and stalls holds a
	// turn and disk only this long.
	bodyIdle = 20 * time.Second
)

// gate bounds one kind of work running at once.
type gate struct {
	what         string
	node         chan struct{}
	nodeN, userN int
	wait         time.Duration
	mu           sync.Mutex
	users        map[string]*userTurns
}

type userTurns struct {
	turns chan struct{}
	// refs counts the user's holders and waiters: the entry goes with
	// the last.
	refs int
}

func newGate(what string, node, perUser int) *gate {
	return &gate{what: what, node: make(chan struct{}, node), nodeN: node, userN: perUser, wait: gateWait, users: map[string]*userTurns{}}
}

// enter waits for a turn for user and returns its release, which may be
// called more than once. Errors: unavailable when no turn frees up within
// the wait.
func (g *gate) enter(ctx context.Context, user string) (func(), error) {
	g.mu.Lock()
	u := g.users[user]
	if u == nil {
		u = &userTurns{turns: make(chan struct{}, g.userN)}
		g.users[user] = u
	}
	u.refs++
	g.mu.Unlock()
	forget := func() {
		g.mu.Lock()
		if u.refs--; u.refs == 0 {
			delete(g.users, user)
		}
		g.mu.Unlock()
	}
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	busy := func(scope string, n int) error {
		return datadesk.Errorf(datadesk.Unavailable, "%d %s already run at once %s, the most allowed; try again in a moment", n, g.what, scope)
	}
	select {
	case u.turns <- struct{}{}:
	case <-timer.C:
		forget()
		return nil, busy("for you", g.userN)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
	select {
	case g.node <- struct{}{}:
	case <-timer.C:
		<-u.turns
		forget()
		return nil, busy("on this server", g.nodeN)
	case <-ctx.Done():
		<-u.turns
		forget()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-g.node
			<-u.turns
			forget()
		})
	}, nil
}

// idleBody is a request body that fails once it has sent nothing for
// bodyIdle: each read moves the connection's read deadline on.
type idleBody struct {
	r    io.Reader
	rc   *http.ResponseController
	idle time.Duration
}

func (s *Server) newIdleBody(w http.ResponseWriter, r io.Reader) io.Reader {
	return &idleBody{r: r, rc: http.NewResponseController(w), idle: s.bodyIdle}
}

func (b *idleBody) Read(p []byte) (int, error) {
	// A writer that cannot set deadlines (a test's recorder) reads as it
	// is.
	_ = b.rc.SetReadDeadline(time.Now().Add(b.idle))
	return b.r.Read(p)
}
