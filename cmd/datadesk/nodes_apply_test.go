package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk/cluster"
	"datadesk/rbac"
)

// TestNodesApplyAddsANode: two nodes serve; a third starts with the new
// member list and `datadesk nodes apply` moves the owners the new ring
// gives it while the nodes serve. The owners that move keep their files,
// web sessions and calls waiting for approval (approved afterwards, they
// run once, on the new node); requests that still reach an old node are
// passed on; the owners that stay never notice; the moving owner's calls
// during its move answer 200 or a 503 to try again, nothing else.
func TestNodesApplyAddsANode(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	var addrs []string
	for range 3 {
		a, err := cluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	two := "n1=" + addrs[0] + ",n2=" + addrs[1]
	three := two + ",n3=" + addrs[2]
	ringTwo, _ := cluster.ParseNodes(two)
	ringThree, _ := cluster.ParseNodes(three)
	users, err := rbac.OpenUsers(shared)
	if err != nil {
		t.Fatal(err)
	}
	admin, adminToken, err := users.Add("root", "admin")
	if err != nil {
		t.Fatal(err)
	}
	// The approver is asked at its node by the old list: after the change
	// that node answers or passes the request on.
	adminNode := ringTwo.Owner(admin.ID).Name
	type owner struct {
		name, id, token string
		before, after   string
		file, pending   string
		cookie          string
	}
	var movers, stayers []*owner
	for i := 0; i < 80 && (len(movers) < 3 || len(stayers) < 2); i++ {
		u, token, err := users.Add(fmt.Sprintf("vi%d", i), "viewer")
		if err != nil {
			t.Fatal(err)
		}
		o := &owner{name: u.Name, id: u.ID, token: token, before: ringTwo.Owner(u.ID).Name, after: ringThree.Owner(u.ID).Name}
		switch {
		case o.before != o.after && len(movers) < 3:
			movers = append(movers, o)
		case o.before == o.after && len(stayers) < 2:
			stayers = append(stayers, o)
		default:
			continue
		}
		if err := users.SetPassword(u.Name, "a long password of "+u.Name); err != nil {
			t.Fatal(err)
		}
	}
	if len(movers) < 3 || len(stayers) < 2 {
		t.Fatalf("%d owners move and %d stay after 80 users", len(movers), len(stayers))
	}
	startNode(t, "n1", addrs[0], two, shared)
	startNode(t, "n2", addrs[1], two, shared)
	httpc := &http.Client{Timeout: 30 * time.Second}
	at := func(node, token string) client {
		i := map[string]int{"n1": 0, "n2": 1, "n3": 2}[node]
		return client{t: t, base: "http://" + addrs[i], token: token, http: httpc}
	}
	all := append(append([]*owner{}, movers...), stayers...)
	for _, o := range all {
		// A file made by an approved call, a call left waiting, a session.
		c := at(o.before, o.token)
		code, m := c.call("files.create", map[string]any{"filename": o.name + ".csv", "columns": []any{"id", "n"},
			"rows": []any{[]any{"007", 1}, []any{"008", 2}}})
		if code != http.StatusAccepted {
			t.Fatalf("%s's files.create: %d %v", o.name, code, m)
		}
		first := m["approval"].(map[string]any)["id"].(string)
		if code, m, _ := at(adminNode, adminToken).do("POST", "/v1/approvals/"+first+"/approve", nil, ""); code != 200 {
			t.Fatalf("approve %s: %d %v", first, code, m)
		}
		code, m = c.call("files.create", map[string]any{"filename": "later.csv", "columns": []any{"id"}, "rows": []any{[]any{"009"}}})
		if code != http.StatusAccepted {
			t.Fatalf("%s's second files.create: %d %v", o.name, code, m)
		}
		o.pending = m["approval"].(map[string]any)["id"].(string)
		code, m, _ = c.do("GET", "/v1/files", nil, "")
		if files, _ := m["files"].([]any); code != 200 || len(files) != 1 {
			t.Fatalf("%s's files: %d %v", o.name, code, m)
		}
		o.file = m["files"].([]any)[0].(map[string]any)["id"].(string)
		o.cookie = signIn(t, at(o.before, ""), o.name, "a long password of "+o.name)
	}

	startNode(t, "n3", addrs[2], three, shared)
	// Throughout the change, one owner that moves and one that stays ask
	// their old node, as a proxy with the old list sends them.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]map[int]int{}
	for _, o := range []*owner{movers[0], stayers[0]} {
		seen[o.name] = map[int]int{}
		wg.Go(func() {
			c := at(o.before, o.token)
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", c.base+"/v1/files", nil)
				req.Header.Set("Authorization", "Bearer "+o.token)
				res, err := httpc.Do(req)
				if err != nil {
					t.Errorf("%s during the change: %v", o.name, err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "" {
					t.Errorf("%s: a 503 without Retry-After", o.name)
				}
				mu.Lock()
				seen[o.name][res.StatusCode]++
				mu.Unlock()
			}
		})
	}
	// One change at a time: a second apply while one runs is refused.
	unlock, err := cluster.LockPlacement(shared)
	if err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"nodes", "apply", "--nodes", two, "--to", three, "--shared", shared}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "another change of member list is running") {
		t.Errorf("apply while another runs: %v", err)
	}
	unlock()
	var out bytes.Buffer
	err = run([]string{"nodes", "apply", "--nodes", two, "--to", three, "--shared", shared}, &out, io.Discard)
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("nodes apply: %v\n%s", err, out.String())
	}
	t.Logf("nodes apply:\n%s\nanswers during the change: %v", out.String(), seen)
	for name, codes := range seen {
		for code, n := range codes {
			if code != http.StatusOK && code != http.StatusServiceUnavailable {
				t.Errorf("%s during the change: %d answers of %d", name, n, code)
			}
		}
		if codes[http.StatusOK] == 0 {
			t.Errorf("%s during the change: no answer of 200 (%v)", name, codes)
		}
	}
	if seen[stayers[0].name][http.StatusServiceUnavailable] > 0 {
		t.Errorf("an owner that stays got 503 during the change: %v", seen[stayers[0].name])
	}

	for _, o := range all {
		node := o.after
		t.Run(o.name, func(t *testing.T) {
			var where bytes.Buffer
			if err := run([]string{"owner", "where", o.name, "--nodes", two, "--shared", shared}, &where, io.Discard); err != nil ||
				!strings.Contains(where.String(), "is on node "+node+" (") {
				t.Errorf("owner where: %v %q, want %s", err, where.String(), node)
			}
			// Files on the new node, asked there and at the old one.
			for _, via := range []string{node, o.before} {
				code, m, _ := at(via, o.token).do("GET", "/v1/files", nil, "")
				if files, _ := m["files"].([]any); code != 200 || len(files) != 1 || files[0].(map[string]any)["id"] != o.file {
					t.Fatalf("files asked at %s: %d %v, want %s", via, code, m, o.file)
				}
			}
			code, m := at(node, o.token).call("files.query_table", map[string]any{"file_id": o.file,
				"aggregates": []any{map[string]any{"op": "sum", "column": "n"}}})
			if res, _ := m["result"].(map[string]any); code != 200 || fmt.Sprint(res["aggregates"]) != "map[sum_n:3]" {
				t.Fatalf("query on %s: %d %v", node, code, m)
			}
			// The session signed in before the move.
			req, _ := http.NewRequest("GET", "http://"+addrs[map[string]int{"n1": 0, "n2": 1, "n3": 2}[node]]+"/v1/files", nil)
			req.AddCookie(&http.Cookie{Name: "datadesk_session", Value: o.cookie})
			res, err := httpc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("the session from before the move, on %s: %d", node, res.StatusCode)
			}
			// The call left waiting: still waiting, listed once, run once
			// where the owner is now.
			code, m, _ = at(node, o.token).do("GET", "/v1/approvals/"+o.pending, nil, "")
			if a, _ := m["approval"].(map[string]any); code != 200 || a["status"] != "pending" {
				t.Fatalf("the waiting call on %s: %d %v", node, code, m)
			}
			_, m, raw := at(adminNode, adminToken).do("GET", "/v1/approvals?status=pending&limit=200", nil, "")
			if n := strings.Count(string(raw), o.pending); n != 1 {
				t.Fatalf("the approvers' list has %s %d times: %v", o.pending, n, m)
			}
			code, m, _ = at(adminNode, adminToken).do("POST", "/v1/approvals/"+o.pending+"/approve", nil, "")
			if a, _ := m["approval"].(map[string]any); code != 200 || a["status"] != "done" {
				t.Fatalf("approve after the move: %d %v", code, m)
			}
			code, m, _ = at(node, o.token).do("GET", "/v1/files", nil, "")
			if files, _ := m["files"].([]any); code != 200 || len(files) != 2 {
				t.Fatalf("files after the approval: %d %v, want 2", code, m)
			}
		})
	}

	// The same command again, as a script would rerun it: done, exit 0
	// (it exited 1 naming the list in force).
	out.Reset()
	if err := run([]string{"nodes", "apply", "--nodes", two, "--to", three, "--shared", shared}, &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), "already done") {
		t.Errorf("the same apply again: %v\n%s", err, out.String())
	}
	// Run again: nothing is left to move.
	out.Reset()
	if err := run([]string{"nodes", "apply", "--nodes", three, "--to", three, "--shared", shared}, &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), "0 owners moved") {
		t.Errorf("a second apply: %v\n%s", err, out.String())
	}
}

// signIn signs a user in at c and returns the session cookie's value.
func signIn(t *testing.T, c client, name, password string) string {
	t.Helper()
	body := fmt.Sprintf(`{"name":%q,"password":%q}`, name, password)
	req, _ := http.NewRequest("POST", c.base+"/v1/session", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == "datadesk_session" && ck.Value != "" {
			return ck.Value
		}
	}
	t.Fatalf("sign-in of %s: %d, no session cookie", name, res.StatusCode)
	return ""
}
