package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/cluster"
	"datadesk/cluster/haproxytest"
	"datadesk/internal/testenv"
	"datadesk/rbac"
)

// startNode opens a node the way `datadesk serve` does, with its own data
// directory and the shared one, and serves it on addr until the test ends.
func startNode(t *testing.T, name, addr, nodes, shared string) (stop func()) {
	t.Helper()
	data := t.TempDir()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	ef := addEngineFlags(fs)
	nf := addNodeFlags(fs)
	err := fs.Parse([]string{"--data", data, "--nodes", nodes, "--node", name, "--shared", shared,
		"--memory-limit", "256MB", "--max-temp", "1GB", "--threads", "1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{}
	if err := nf.apply(&cfg, data); err != nil {
		t.Fatal(err)
	}
	srv, closeAll, err := openServer(ef, nf.sharedDir(data), ef.config(nil), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(addr)
	go hs.Serve(l)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(ctx)
			closeAll()
		})
	}
	t.Cleanup(stop)
	return stop
}

// client talks to one address with a token or a cookie jar.
type client struct {
	t     *testing.T
	base  string
	token string
	http  *http.Client
}

func (c client) do(method, path string, body io.Reader, contentType string) (int, map[string]any, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return res.StatusCode, m, raw
}

func (c client) call(tool string, args any) (int, map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"arguments": args})
	code, m, _ := c.do("POST", "/v1/tools/"+tool, bytes.NewReader(b), "application/json")
	return code, m
}

func (c client) upload(name string, content []byte) (int, map[string]any) {
	c.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, _ := mw.CreateFormFile("file", name)
	w.Write(content)
	mw.Close()
	code, m, _ := c.do("POST", "/v1/files", &b, mw.FormDataContentType())
	return code, m
}

func errorCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// TestOwnersOverTwoNodes starts two nodes and HAProxy on loopback, with the
// configuration `datadesk proxy config` prints, and checks through the
// proxy that each owner's uploads, lists, queries, downloads, web sessions
// and approvals work wherever the owner lives, while a request sent
// straight to the wrong node is refused with 421, never answered from an
// empty account.
func TestOwnersOverTwoNodes(t *testing.T) {
	t.Parallel()
	if _, err := haproxytest.Binary(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	shared := t.TempDir()
	var addrs []string
	for range 2 {
		a, err := haproxytest.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	nodes := "n1=" + addrs[0] + ",n2=" + addrs[1]
	ring, err := cluster.ParseNodes(nodes)
	if err != nil {
		t.Fatal(err)
	}
	var conf bytes.Buffer
	if err := run([]string{"proxy", "config", "--nodes", nodes}, &conf, io.Discard); err != nil || !strings.Contains(conf.String(), "hash-type consistent") {
		t.Fatalf("proxy config: %v\n%s", err, conf.String())
	}
	users, err := rbac.OpenUsers(shared)
	if err != nil {
		t.Fatal(err)
	}
	// Owners on both nodes: add analysts until each node holds two.
	type owner struct {
		name, id, token, node string
	}
	var owners []owner
	per := map[string]int{}
	for i := 0; i < 40 && (per["n1"] < 2 || per["n2"] < 2); i++ {
		u, token, err := users.Add(fmt.Sprintf("ana%d", i), "analyst")
		if err != nil {
			t.Fatal(err)
		}
		node := ring.Owner(u.ID).Name
		if per[node] >= 2 {
			continue
		}
		per[node]++
		if err := users.SetPassword(u.Name, "correct horse "+u.Name); err != nil {
			t.Fatal(err)
		}
		owners = append(owners, owner{u.Name, u.ID, token, node})
	}
	if per["n1"] < 2 || per["n2"] < 2 {
		t.Fatalf("owners per node %v after 40 users", per)
	}
	// owner where names the node by name and by id, as the ring does.
	for _, o := range owners[:2] {
		for _, who := range []string{o.name, o.id} {
			var out bytes.Buffer
			if err := run([]string{"owner", "where", who, "--nodes", nodes, "--shared", shared}, &out, io.Discard); err != nil ||
				!strings.Contains(out.String(), "("+o.id+") is on node "+o.node+" (") {
				t.Errorf("owner where %s: %v %q, want node %s", who, err, out.String(), o.node)
			}
		}
	}
	stops := map[string]func(){}
	for i, name := range []string{"n1", "n2"} {
		stops[name] = startNode(t, name, addrs[i], nodes, shared)
	}
	proxy, err := haproxytest.Start(t, ring)
	if err != nil {
		t.Fatal(err)
	}
	httpc := &http.Client{Timeout: 30 * time.Second}
	other := map[string]string{"n1": addrs[1], "n2": addrs[0]}

	for i, o := range owners {
		t.Run(o.name, func(t *testing.T) {
			c := client{t: t, base: "http://" + proxy, token: o.token, http: httpc}
			csv := fmt.Sprintf("id,amount\n%03d,%d\n%03d,%d\n", i, 10*(i+1), i+100, i+1)
			code, m := c.upload("own.csv", []byte(csv))
			if code != http.StatusCreated {
				t.Fatalf("upload: %d %v", code, m)
			}
			file := m["file"].(map[string]any)
			fileID := file["id"].(string)
			code, m, _ = c.do("GET", "/v1/files", nil, "")
			if files, _ := m["files"].([]any); code != 200 || len(files) != 1 || files[0].(map[string]any)["id"] != fileID {
				t.Fatalf("list: %d %v; want only %s", code, m, fileID)
			}
			code, m = c.call("files.query_table", map[string]any{"file_id": fileID,
				"aggregates": []any{map[string]any{"op": "sum", "column": "amount"}}})
			if res, _ := m["result"].(map[string]any); code != 200 || fmt.Sprint(res["aggregates"]) != fmt.Sprintf("map[sum_amount:%d]", 11*(i+1)) {
				t.Fatalf("query: %d %v", code, m)
			}
			link := file["download_url"].(string)
			anon := client{t: t, base: "http://" + proxy, http: httpc}
			if code, _, raw := anon.do("GET", link, nil, ""); code != 200 || string(raw) != csv {
				t.Fatalf("signed download through the proxy: %d %q", code, raw)
			}
			// Straight to the node that does not hold the owner.
			wrong := client{t: t, base: "http://" + other[o.node], token: o.token, http: httpc}
			if code, m, _ := wrong.do("GET", "/v1/files", nil, ""); code != http.StatusMisdirectedRequest || errorCode(m) != "misdirected" {
				t.Fatalf("token at the wrong node: %d %v; want 421", code, m)
			}
			wrong.token = ""
			if code, m, _ := wrong.do("GET", link, nil, ""); code != http.StatusMisdirectedRequest {
				t.Fatalf("signed link at the wrong node: %d %v; want 421", code, m)
			}
			// A web session, signed in on whichever node the proxy picks.
			jar, _ := cookiejar.New(nil)
			web := client{t: t, base: "http://" + proxy, http: &http.Client{Timeout: 30 * time.Second, Jar: jar}}
			for range 2 {
				body := fmt.Sprintf(`{"name":%q,"password":%q}`, o.name, "correct horse "+o.name)
				if code, m, _ := web.do("POST", "/v1/session", strings.NewReader(body), "application/json"); code != 200 {
					t.Fatalf("sign in: %d %v", code, m)
				}
				code, m, _ := web.do("GET", "/v1/files", nil, "")
				if files, _ := m["files"].([]any); code != 200 || len(files) != 1 {
					t.Fatalf("list by cookie: %d %v", code, m)
				}
			}
		})
	}

	t.Run("platform acting for owners by id", func(t *testing.T) {
		_, botToken, err := users.Add("bot", "platform")
		if err != nil {
			t.Fatal(err)
		}
		bot := client{t: t, base: "http://" + proxy, http: httpc}
		for _, o := range owners {
			req, _ := http.NewRequest("GET", bot.base+"/v1/files", nil)
			req.Header.Set("Authorization", "Bearer "+botToken)
			req.Header.Set("X-On-Behalf-Of", o.id)
			res, err := httpc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.NewDecoder(res.Body).Decode(&m)
			res.Body.Close()
			if files, _ := m["files"].([]any); res.StatusCode != 200 || len(files) != 1 {
				t.Fatalf("acting for %s (%s): %d %v", o.name, o.id, res.StatusCode, m)
			}
		}
	})

	t.Run("approvals", func(t *testing.T) {
		_, adminToken, err := users.Add("root", "admin")
		if err != nil {
			t.Fatal(err)
		}
		admin, _ := users.ByName("root")
		// A viewer on the other node from the approver: files.create waits.
		var viewer client
		for i := 0; i < 40 && viewer.token == ""; i++ {
			u, token, err := users.Add(fmt.Sprintf("vic%d", i), "viewer")
			if err != nil {
				t.Fatal(err)
			}
			if ring.Owner(u.ID).Name != ring.Owner(admin.ID).Name {
				viewer = client{t: t, base: "http://" + proxy, token: token, http: httpc}
			}
		}
		if viewer.token == "" {
			t.Fatal("no viewer on the other node after 40 users")
		}
		approver := client{t: t, base: "http://" + proxy, token: adminToken, http: httpc}
		code, m := viewer.call("files.create", map[string]any{"filename": "made.csv", "columns": []any{"id", "n"},
			"rows": []any{[]any{"007", 1}, []any{"008", 2}}})
		if code != http.StatusAccepted {
			t.Fatalf("viewer's files.create: %d %v; want 202", code, m)
		}
		id := m["approval"].(map[string]any)["id"].(string)
		code, m, _ = approver.do("GET", "/v1/approvals?status=pending", nil, "")
		if code != 200 || !strings.Contains(fmt.Sprint(m["approvals"]), id) {
			t.Fatalf("approver's list: %d %v; want %s", code, m, id)
		}
		code, m, _ = approver.do("POST", "/v1/approvals/"+id+"/approve", nil, "")
		if a, _ := m["approval"].(map[string]any); code != 200 || a["status"] != "done" {
			t.Fatalf("approve: %d %v", code, m)
		}
		if code, m, _ = approver.do("POST", "/v1/approvals/"+id+"/approve", nil, ""); code != http.StatusConflict {
			t.Fatalf("second approve: %d %v; want 409", code, m)
		}
		code, m, _ = viewer.do("GET", "/v1/approvals/"+id, nil, "")
		if a, _ := m["approval"].(map[string]any); code != 200 || a["status"] != "done" {
			t.Fatalf("viewer's approval: %d %v", code, m)
		}
		code, m, _ = viewer.do("GET", "/v1/files", nil, "")
		if files, _ := m["files"].([]any); code != 200 || len(files) != 1 || files[0].(map[string]any)["filename"] != "made.csv" {
			t.Fatalf("viewer's files after approval: %d %v", code, m)
		}

		// The web page: the approver, signed in by cookie, sees the
		// other node's call in the list and approves it with the form.
		code, m = viewer.call("files.create", map[string]any{"filename": "page.csv", "columns": []any{"id"}, "rows": []any{[]any{"009"}}})
		if code != http.StatusAccepted {
			t.Fatalf("second files.create: %d %v", code, m)
		}
		id2 := m["approval"].(map[string]any)["id"].(string)
		if err := users.SetPassword("root", "root's long password"); err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		page := client{t: t, base: "http://" + proxy, http: &http.Client{Timeout: 30 * time.Second, Jar: jar}}
		code, m, _ = page.do("POST", "/v1/session", strings.NewReader(`{"name":"root","password":"root's long password"}`), "application/json")
		if code != 200 {
			t.Fatalf("approver's sign-in: %d %v", code, m)
		}
		csrf := m["csrf_token"].(string)
		if code, _, raw := page.do("GET", "/approvals", nil, ""); code != 200 || !strings.Contains(string(raw), id2) {
			t.Fatalf("approvals page: %d, lists %s: %v", code, id2, strings.Contains(string(raw), id2))
		}
		code, _, raw := page.do("POST", "/approvals/"+id2+"/approve", strings.NewReader("csrf_token="+csrf), "application/x-www-form-urlencoded")
		if code != 200 || !strings.Contains(string(raw), "Approved "+id2) {
			t.Fatalf("approve from the page: %d %s", code, raw)
		}
		code, m, _ = viewer.do("GET", "/v1/approvals/"+id2, nil, "")
		if a, _ := m["approval"].(map[string]any); code != 200 || a["status"] != "done" {
			t.Fatalf("viewer's second approval: %d %v", code, m)
		}
	})

	// Last: a node down leaves the other node's owners, sign-in and
	// /healthz working, and its own owners a JSON 503.
	defer t.Run("a node down", func(t *testing.T) {
		stops["n2"]()
		anon := client{t: t, base: "http://" + proxy, http: httpc}
		deadline := time.Now().Add(15 * time.Second)
		for ok := 0; ok < 6; {
			if time.Now().After(deadline) {
				t.Fatalf("/healthz through the proxy kept failing with n2 down")
			}
			if code, _, _ := anon.do("GET", "/healthz", nil, ""); code == http.StatusOK {
				ok++
			} else {
				ok = 0
				time.Sleep(200 * time.Millisecond)
			}
		}
		for range 4 {
			if code, _, _ := anon.do("GET", "/signin", nil, ""); code != http.StatusOK {
				t.Errorf("sign-in page with n2 down: %d", code)
			}
		}
		for _, o := range owners {
			c := client{t: t, base: "http://" + proxy, token: o.token, http: httpc}
			code, m, _ := c.do("GET", "/v1/files", nil, "")
			switch {
			case o.node == "n1" && code != http.StatusOK:
				t.Errorf("%s on n1 with n2 down: %d %v", o.name, code, m)
			case o.node == "n2" && (code != http.StatusServiceUnavailable || errorCode(m) != "unavailable"):
				t.Errorf("%s on n2, which is down: %d %v, want a JSON 503", o.name, code, m)
			}
		}
	})

	t.Run("requests between nodes need the cluster key", func(t *testing.T) {
		o := owners[0]
		node := client{t: t, base: "http://" + addrs[0], http: httpc}
		req, _ := http.NewRequest("GET", node.base+"/v1/approvals", nil)
		req.Header.Set("X-Datadesk-Cluster-Key", strings.Repeat("ab", 32))
		req.Header.Set("X-Datadesk-Caller", o.id)
		res, err := httpc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("a wrong cluster key: %d, want 401", res.StatusCode)
		}
		own := client{t: t, base: "http://" + proxy, token: o.token, http: httpc}
		if code, m, _ := own.do("POST", "/v1/cluster/sessions", nil, ""); code != http.StatusNotFound {
			t.Errorf("a user asking the nodes' session route: %d %v, want 404", code, m)
		}
	})
}

// TestPeerDownNamed: an approver's list asks every node; with a peer down
// it answered 500 "internal error", then 503 naming the node, so no call
// could be approved while one node was down. It now answers with the
// queues it could read and names the node that did not answer.
func TestPeerDownNamed(t *testing.T) {
	shared := t.TempDir()
	a1, err := cluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	a2, err := cluster.FreeAddr() // nothing listens here
	if err != nil {
		t.Fatal(err)
	}
	nodes := "n1=" + a1 + ",n2=" + a2
	ring, err := cluster.ParseNodes(nodes)
	if err != nil {
		t.Fatal(err)
	}
	users, err := rbac.OpenUsers(shared)
	if err != nil {
		t.Fatal(err)
	}
	var token string
	for i := 0; token == ""; i++ {
		u, tok, err := users.Add(fmt.Sprintf("admin%d", i), "admin")
		if err != nil {
			t.Fatal(err)
		}
		if ring.Owner(u.ID).Name == "n1" {
			token = tok
		}
	}
	startNode(t, "n1", a1, nodes, shared)
	c := client{t: t, base: "http://" + a1, token: token, http: http.DefaultClient}
	code, m, _ := c.do("GET", "/v1/approvals", nil, "")
	if code != http.StatusOK || fmt.Sprint(m["unanswered_nodes"]) != "[n2]" {
		t.Errorf("approvals with n2 down: got %d %v, want 200 naming n2 as not answering", code, m)
	}
}

// TestNodesPlan: a third node takes owners only from the others, about a
// third of them, and the plan says each move as the rings give it.
func TestNodesPlan(t *testing.T) {
	shared := t.TempDir()
	users, err := rbac.OpenUsers(shared)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 90 {
		if _, _, err := users.Add(fmt.Sprintf("u%d", i), "analyst"); err != nil {
			t.Fatal(err)
		}
	}
	two, three := "n1=127.0.0.1:1,n2=127.0.0.1:2", "n1=127.0.0.1:1,n2=127.0.0.1:2,n3=127.0.0.1:3"
	var out bytes.Buffer
	if err := run([]string{"nodes", "plan", "--nodes", two, "--to", three, "--shared", shared}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	after, _ := cluster.ParseNodes(three)
	moves := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "move ") {
			continue
		}
		moves++
		id := line[strings.Index(line, "(")+1 : strings.Index(line, ")")]
		if !strings.HasSuffix(line, "-> n3") || after.Owner(id).Name != "n3" {
			t.Errorf("plan line %q", line)
		}
	}
	if moves < 15 || moves > 45 || !strings.Contains(out.String(), fmt.Sprintf("%d of 90 owners move", moves)) {
		t.Errorf("%d moves:\n%s", moves, out.String())
	}
}
