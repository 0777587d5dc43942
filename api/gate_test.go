package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"
)

// TestMCPReadsBounded: one 1.6 KB batch of 7 resources/read of a wide
// table took a node from 113 to 379 MB, 20 such batches at once to
// 5,028 MB: each read held a page of 6.4 MB and encoded it about nine
// times to return 256 KiB, and nothing bounded reads running together.
// A page is now encoded once, a row at a time up to its byte cap, and
// reads take turns, a few at once on the node and for each user. Twenty
// batches at once grow the process less than 1 GB, and every read answers.
func TestMCPReadsBounded(t *testing.T) {
	// Not parallel: it measures the process's memory, which other tests would add to.
	ts := apitest.New(t, apitest.Options{MaxUpload: 32 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	table := apitest.WideTable(t, ts, ana, 120)
	var batch []any
	for i := range 7 {
		batch = append(batch, map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "resources/read",
			"params": map[string]any{"uri": "datadesk://tables/" + table + "?limit=200"}})
	}
	body, _ := json.Marshal(batch)
	var (
		mu          sync.Mutex
		codes       = map[int]int{}
		pages, busy int
	)
	rss, _ := apitest.MemoryPeaks(t, func() {
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				code, raw := ts.PostJSON("/mcp", ana, bytes.NewReader(body), int64(len(body)))
				mu.Lock()
				defer mu.Unlock()
				codes[code]++
				pages += strings.Count(string(raw), `\"has_more\":true`)
				busy += strings.Count(string(raw), "already run at once")
			})
		}
		wg.Wait()
	})
	t.Logf("20 batches of 7 reads: the process grew %d MiB; answers %v, %d pages, %d told to try again", rss>>20, codes, pages, busy)
	// On a loaded machine a read may wait past its turn's bound and be
	// told to try again; every read answers one way or the other.
	if codes[http.StatusOK] != 20 || pages+busy != 140 || pages == 0 {
		t.Errorf("answers %v with %d pages and %d told to try again, want 20 of 200 and 140 reads answered", codes, pages, busy)
	}
	if rss > 1<<30 {
		t.Errorf("the process grew %d MiB, want under 1 GiB", rss>>20)
	}
}

// stalledBody sends its first bytes and then nothing until it is closed.
type stalledBody struct {
	head []byte
	done chan struct{}
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	<-b.done
	return 0, io.ErrUnexpectedEOF
}

// TestBodiesBounded: 8 requests from one user, each sending 60 of a
// declared 64 MiB and then waiting, held 503 MB of files for 30 s and
// more: nothing bounded bodies kept at once, and a body could stall
// without end. Large bodies now take turns (two for a user, a few on the
// node; the rest wait, then answer 503 with Retry-After), and a body that
// sends nothing for a while is dropped, which frees its turn.
func TestBodiesBounded(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it would stretch.
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	ts.Server.SetBodiesWait(500 * time.Millisecond)
	*ts.Server.BodyIdleRef() = 2 * time.Second
	done := make(chan struct{})
	defer close(done)
	send := func() (int, string) {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/tools/files.create", &stalledBody{head: bytes.Repeat([]byte(" "), 2<<20), done: done})
		req.ContentLength = 64 << 20
		req.Header.Set("Authorization", "Bearer "+ana)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	start := time.Now()
	type answer struct {
		code  int
		retry string
		after time.Duration
	}
	answers := make(chan answer, 4)
	for range 4 {
		go func() {
			code, retry := send()
			answers <- answer{code, retry, time.Since(start)}
		}()
	}
	var busy, dropped int
	for range 4 {
		a := <-answers
		switch {
		case a.code == http.StatusServiceUnavailable && a.retry != "":
			busy++
		case a.code == http.StatusBadRequest || a.code == 0:
			// The stalled body was dropped: the server answered, or
			// closed the connection while the client still sent.
			dropped++
			if a.after > 20*time.Second {
				t.Errorf("a stalled body was dropped after %v", a.after)
			}
		default:
			t.Errorf("got %d %q", a.code, a.retry)
		}
	}
	if busy != 2 || dropped != 2 {
		t.Errorf("%d told to retry and %d dropped, want 2 and 2", busy, dropped)
	}
	// The turns are free again.
	if code, _ := ts.PostJSON("/v1/tools/files.create", ana, strings.NewReader(`{"arguments":{"filename":"a.txt","content":"hi"}}`), -1); code != http.StatusOK {
		t.Errorf("a call after the stalled ones: %d", code)
	}
}

// trickle sends a byte every pause until done is closed.
type trickle struct {
	pause time.Duration
	done  chan struct{}
}

func (b *trickle) Read(p []byte) (int, error) {
	select {
	case <-b.done:
		return 0, io.ErrUnexpectedEOF
	case <-time.After(b.pause):
	}
	p[0] = '-'
	return 1, nil
}

// TestTricklingBodiesLoseTheirTurn: bodies are bounded to 8 on a node and
// 2 a user, but a byte every 10 s kept a turn for ever: four accounts held
// all eight for 70 s, and every upload on the node, an admin's 51-byte CSV
// too, answered 503. A body must now arrive at a minimum rate once its
// first seconds are past, or it is dropped with its turn, and the admin's
// upload goes through.
func TestTricklingBodiesLoseTheirTurn(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	root := apitest.AddUser(t, users, "root", "admin")
	ts.Server.SetBodiesWait(3 * time.Second)
	*ts.Server.BodyGraceRef() = 500 * time.Millisecond
	done := make(chan struct{})
	defer close(done)
	start := time.Now()
	dropped := make(chan time.Duration, api.BodiesPerNode)
	for i := range api.BodiesPerNode {
		name := fmt.Sprintf("slow%d", i/api.BodiesPerUser)
		var token string
		if i%api.BodiesPerUser == 0 {
			token = apitest.AddUser(t, users, name, "analyst")
		} else if token, _ = users.AddToken(name); token == "" {
			t.Fatalf("no second token for %s", name)
		}
		go func() {
			req, _ := http.NewRequest("POST", ts.URL+"/v1/files", &trickle{pause: 50 * time.Millisecond, done: done})
			req.ContentLength = 1 << 20
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			dropped <- time.Since(start)
		}()
	}
	// Every turn of the node is held.
	for ts.Server.BodiesHeld() < api.BodiesPerNode {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the trickling bodies hold %d turns, want %d", ts.Server.BodiesHeld(), api.BodiesPerNode)
		}
		runtime.Gosched()
	}
	code, m := ts.Upload(root, "small.csv", []byte("id,name,amount\n1,ana,10\n2,bob,20\n3,cy,30\n"))
	if code != http.StatusCreated {
		t.Errorf("an admin's small upload while bodies trickle: %d %v", code, m)
	}
	for range api.BodiesPerNode {
		select {
		case after := <-dropped:
			if after > 3*time.Second {
				t.Errorf("a trickling body was dropped after %v", after)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a trickling body still holds its turn after %v", time.Since(start))
		}
	}
	t.Logf("the admin's upload answered %d after %v", code, time.Since(start))
}

// paced sends n bytes at rate bytes a second, in pieces of a tenth of a
// second's worth.
type paced struct {
	n, rate int
	start   time.Time
	sent    int
}

func (b *paced) Read(p []byte) (int, error) {
	if b.sent == b.n {
		return 0, io.EOF
	}
	if b.start.IsZero() {
		b.start = time.Now()
	}
	k := min(len(p), b.rate/10, b.n-b.sent)
	due := b.start.Add(time.Duration(float64(b.sent+k) / float64(b.rate) * float64(time.Second)))
	time.Sleep(time.Until(due))
	copy(p, bytes.Repeat([]byte("a"), k))
	b.sent += k
	return k, nil
}

// TestBodyAtTheMinimumRate: the body pace at its limit: a body arriving a
// little above the minimum rate, past its grace, is kept whole, and one a
// little below is dropped, each in the time its bytes take.
func TestBodyAtTheMinimumRate(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	*ts.Server.BodyGraceRef() = 200 * time.Millisecond
	for _, tc := range []struct {
		rate int
		kept bool
	}{{api.BodyMinRate * 5 / 4, true}, {api.BodyMinRate / 2, false}} {
		const n = 48 << 10
		start := time.Now()
		req, _ := http.NewRequest("POST", ts.URL+"/v1/tools/files.create",
			io.MultiReader(strings.NewReader(`{"arguments":{"filename":"a.txt","content":"`), &paced{n: n, rate: tc.rate}, strings.NewReader(`"}}`)))
		req.ContentLength = n + 47
		req.Header.Set("Authorization", "Bearer "+ana)
		req.Header.Set("Content-Type", "application/json")
		code := 0
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			code = resp.StatusCode
			resp.Body.Close()
		}
		took := time.Since(start)
		t.Logf("%d KiB at %d KiB/s: %d after %v", n>>10, tc.rate>>10, code, took)
		// Dropped, the server answers 400 or closes the connection while
		// the client still sends.
		if (code == http.StatusOK) != tc.kept || !tc.kept && code != 0 && code != http.StatusBadRequest {
			t.Errorf("%d KiB at %d KiB/s: %d, kept %v", n>>10, tc.rate>>10, code, tc.kept)
		}
		if took > 3*time.Second {
			t.Errorf("%d KiB at %d KiB/s took %v", n>>10, tc.rate>>10, took)
		}
	}
}
