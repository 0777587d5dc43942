package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/labstack/echo/v5"

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
	// bodyGrace and bodyMinRate: past its first bodyGrace, a body must have
	// arrived at bodyMinRate bytes a second on average, or it is dropped:
	// a client that sends a byte now and then holds a turn only this long.
	bodyGrace   = 10 * time.Second
	bodyMinRate = 32 << 10
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

// pacedBody is a request body that fails once it has sent nothing for
// bodyIdle, or, past its first bodyGrace, once it is behind bodyMinRate:
// each read sets the connection's read deadline to the sooner of the two.
type pacedBody struct {
	r           io.Reader
	rc          *http.ResponseController
	idle, grace time.Duration
	rate        int64
	start       time.Time
	n           int64
}

func (s *Server) newPacedBody(w http.ResponseWriter, r io.Reader) io.Reader {
	return &pacedBody{r: r, rc: http.NewResponseController(w), idle: s.bodyIdle, grace: s.bodyGrace, rate: s.bodyMinRate, start: time.Now()}
}

func (b *pacedBody) Read(p []byte) (int, error) {
	now := time.Now()
	deadline := now.Add(b.idle)
	// The next byte is due when the bytes so far are all the minimum
	// rate asks for.
	due := b.start.Add(b.grace + time.Duration(float64(b.n)/float64(b.rate)*float64(time.Second)))
	if due.Before(deadline) {
		deadline = due
	}
	if !deadline.After(now) {
		return 0, tooSlow(b.rate, b.grace)
	}
	// A writer that cannot set deadlines (a test's recorder) reads as it
	// is.
	_ = b.rc.SetReadDeadline(deadline)
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && deadline.Equal(due) {
		err = tooSlow(b.rate, b.grace)
	}
	return n, err
}

func tooSlow(rate int64, grace time.Duration) error {
	return datadesk.Errorf(datadesk.Invalid, "the request's body arrived too slowly: after its first %v it must come at %d KiB a second or more", grace, rate>>10)
}

// withinQueryTimeout gives a request that runs the caller's queries (a
// web page, a read of rows, an export) one deadline, the query timeout,
// for all its work together: however many statements it runs, one after
// another, it ends within it (timeout, 504; an export cut if it had
// begun). Reads of the catalog alone (lists of files, a table's schema)
// are bounded by the owner's limits instead.
func (s *Server) withinQueryTimeout(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.QueryTimeout)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}
