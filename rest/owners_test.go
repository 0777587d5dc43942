package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk/api/apitest"
	"datadesk/engine"
)

// TestManyOwnersPastOpenCap is a chat platform's load: more owners than
// may be open at once, each with a table, queried by 16 callers in no
// order. Owners are closed for room and opened again while other calls for
// them are on their way; every call must answer 200.
func TestManyOwnersPastOpenCap(t *testing.T) {
	t.Parallel()
	const owners, callers, calls = 24, 16, 480
	ts := apitest.New(t, apitest.Options{Engine: engine.Config{MaxOpen: 4, MemoryLimit: "512MB", MaxTempSize: "1GB"}})
	users := ts.Users
	var csv strings.Builder
	csv.WriteString("region,code,amount\n")
	for i := range 3000 {
		fmt.Fprintf(&csv, "r%d,%05d,%d.%02d\n", i%7, i, i%500, i%100)
	}
	type owner struct{ token, table string }
	all := make([]owner, owners)
	for i := range all {
		token := apitest.AddUser(t, users, fmt.Sprintf("user%02d", i), "analyst")
		code, m := ts.Upload(token, "sales.csv", []byte(csv.String()))
		if code != http.StatusCreated {
			t.Fatalf("upload for owner %d: got %d %v", i, code, m)
		}
		all[i] = owner{token, m["file"].(map[string]any)["table_id"].(string)}
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
	)
	next := make(chan int)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := all[i]
				body := fmt.Sprintf(`{"arguments":{"file_id":%q,"group_by":["region"],"aggregates":[{"op":"sum","column":"amount"}]}}`, o.table)
				req, _ := http.NewRequest("POST", ts.URL+"/v1/tools/files.query_table", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+o.token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				var failure string
				if err != nil {
					failure = err.Error()
				} else {
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						failure = fmt.Sprintf("%d %s", resp.StatusCode, raw)
					}
				}
				if failure != "" {
					mu.Lock()
					failures = append(failures, failure)
					mu.Unlock()
				}
			}
		}()
	}
	for range calls {
		next <- rand.IntN(owners)
	}
	close(next)
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d calls failed; first: %s", len(failures), calls, failures[0])
	}
}

// TestOwnersAttachedTogetherIsolation: two owners' databases are attached
// to the one DuckDB instance at once, and the first tries to reach the
// second's catalog, tables and files through every argument that reaches
// a statement or a file: ids, columns, filters (names and values), group
// names, aggregate columns and names, sort keys, shown views, copies,
// ZIP members, MCP resources, the rows and export endpoints and the web
// page's filters and sort. Nothing answers with the second owner's data
// or a server fault; ids answer like missing ones.
func TestOwnersAttachedTogetherIsolation(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana, bob := apitest.AddUser(t, users, "ana", "analyst"), apitest.AddUser(t, users, "bob", "analyst")
	bobUser, err := users.Authenticate(bob)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "SECRET-OF-BOB"
	_, m := ts.Upload(ana, "a.csv", []byte("name,amount\nalpha,1\nbeta,2\n"))
	aFile := m["file"].(map[string]any)
	aTable := aFile["table_id"].(string)
	_, m = ts.Upload(bob, "b.csv", []byte("secret,amount\n"+secret+",99\n"))
	bFile := m["file"].(map[string]any)
	bFileID, bTable := bFile["id"].(string), bFile["table_id"].(string)
	// Bob's database stays attached while Ana's calls run.
	_, release, err := ts.Server.Engine().Acquire(context.Background(), bobUser.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()

	cat := bobUser.ID
	names := []string{
		"secret",
		cat + ".data." + bTable,
		cat + ".data." + bTable + ".secret",
		`"` + cat + `".data."` + bTable + `"`,
		`amount" FROM "` + cat + `".data."` + bTable + `" --`,
		bTable,
		"main.dd_files",
		`"` + cat + `".main.dd_files`,
	}
	values := []any{
		"' OR 1=1 --",
		`x') UNION SELECT secret FROM "` + cat + `".data."` + bTable + `" --`,
		[]any{secret, `'); DETACH "` + cat + `"; --`},
	}
	check := func(what string, code int, raw []byte) {
		t.Helper()
		if code >= 500 {
			t.Errorf("%s: server fault %d %s", what, code, raw)
		}
		if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("99")) && bytes.Contains(raw, []byte(bFileID)) {
			t.Errorf("%s: answer holds the other owner's data: %s", what, raw)
		}
	}
	query := func(what string, args map[string]any, wantCode int) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"arguments": args})
		code, _, raw := ts.Do("POST", "/v1/tools/files.query_table", ana, bytes.NewReader(body), "application/json")
		check(what, code, raw)
		if wantCode != 0 && code != wantCode {
			t.Errorf("%s: got %d %s, want %d", what, code, raw, wantCode)
		}
	}
	for _, id := range []string{bTable, bFileID, cat + ".data." + bTable} {
		query("file_id "+id, map[string]any{"file_id": id, "limit": 5}, 0)
		code, _, _ := ts.Do("POST", "/v1/tools/files.query_table", ana, strings.NewReader(`{"arguments":{"file_id":"`+id+`"}}`), "application/json")
		if code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("file_id %s: got %d, want 404 or 400", id, code)
		}
	}
	for _, n := range names {
		query("columns "+n, map[string]any{"file_id": aTable, "columns": []any{n}, "limit": 5}, http.StatusBadRequest)
		query("filter column "+n, map[string]any{"file_id": aTable, "filters": []any{map[string]any{"column": n, "op": "eq", "value": "x"}}}, http.StatusBadRequest)
		query("group_by "+n, map[string]any{"file_id": aTable, "group_by": []any{n}}, http.StatusBadRequest)
		query("aggregate column "+n, map[string]any{"file_id": aTable, "aggregates": []any{map[string]any{"op": "max", "column": n}}}, http.StatusBadRequest)
		query("sort_by "+n, map[string]any{"file_id": aTable, "sort_by": n, "limit": 5}, http.StatusBadRequest)
		query("aggregate name "+n, map[string]any{"file_id": aTable, "group_by": []any{"name"},
			"aggregates": []any{map[string]any{"op": "sum", "column": "amount", "name": n}}, "limit": 5}, http.StatusOK)
		query("shown view named "+n, map[string]any{"file_id": aTable, "group_by": []any{"name"},
			"aggregates": []any{map[string]any{"op": "sum", "column": "amount", "name": n}}, "show": true}, http.StatusOK)
		for _, p := range []string{"/v1/tables/" + aTable + "/rows?sort=" + url.QueryEscape(n), "/v1/tables/" + aTable + "/export?format=csv&sort=" + url.QueryEscape(n)} {
			code, _, raw := ts.Do("GET", p, ana, nil, "")
			check(p, code, raw)
		}
	}
	for _, v := range values {
		op := "eq"
		if _, ok := v.([]any); ok {
			op = "in"
		}
		query(fmt.Sprintf("filter value %v", v), map[string]any{"file_id": aTable, "filters": []any{map[string]any{"column": "name", "op": op, "value": v}}, "limit": 5}, http.StatusOK)
		query(fmt.Sprintf("contains %v", v), map[string]any{"file_id": aTable, "filters": []any{map[string]any{"column": "name", "op": "contains", "value": fmt.Sprint(v)}}, "limit": 5}, http.StatusOK)
	}
	create := func(what string, args map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"arguments": args})
		code, _, raw := ts.Do("POST", "/v1/tools/files.create", ana, bytes.NewReader(body), "application/json")
		check(what, code, raw)
		if code != http.StatusNotFound {
			t.Errorf("%s: got %d %s, want 404", what, code, raw)
		}
	}
	create("copy of the other owner's file", map[string]any{"filename": "copy.csv", "source_file_id": bFileID})
	create("copy of the other owner's table", map[string]any{"filename": "copy.xlsx", "source_file_id": bTable})
	create("zip of the other owner's file", map[string]any{"filename": "all.zip", "file_ids": []any{aFile["id"], bFileID}})
	body, _ := json.Marshal(map[string]any{"arguments": map[string]any{"file_id": bFileID}})
	code, _, raw := ts.Do("POST", "/v1/tools/files.read", ana, bytes.NewReader(body), "application/json")
	check("files.read", code, raw)
	if code != http.StatusNotFound {
		t.Errorf("files.read of the other owner's file: got %d", code)
	}
	for _, p := range []string{"/v1/tables/" + bTable + "/export?format=csv", "/v1/tables/" + bTable + "/rows", "/v1/files/" + bFileID + "/content", "/v1/tables/" + bTable} {
		code, _, raw := ts.Do("GET", p, ana, nil, "")
		check(p, code, raw)
		if code != http.StatusNotFound {
			t.Errorf("%s: got %d, want 404", p, code)
		}
	}
	cs := apitest.MCPTransports["http"](t, ts, ana)
	for _, uri := range []string{"datadesk://tables/" + bTable + "?offset=0&limit=5", "datadesk://tables/" + bFileID} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err == nil {
			t.Errorf("MCP resource %s of the other owner: %v", uri, apitest.MustJSON(res))
		}
	}
	client, _ := ts.PageSignIn(users, "ana")
	for _, n := range names {
		for _, p := range []string{
			"/tables/" + aTable + "?sort=" + url.QueryEscape(n),
			"/tables/" + aTable + "?f.name=" + url.QueryEscape(fmt.Sprint(values[1])) + "&q=" + url.QueryEscape(n),
			"/tables/" + aTable + "/export?format=csv&sort=" + url.QueryEscape(n),
			"/tables/" + aTable + "?summary=" + url.QueryEscape(n),
			"/tables/" + bTable,
		} {
			resp, err := client.Get(ts.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			check("page "+p, resp.StatusCode, raw)
		}
	}
	// Bob's table is untouched and still his alone.
	code, m, _ = ts.Do("POST", "/v1/tools/files.query_table", bob, strings.NewReader(`{"arguments":{"file_id":"`+bTable+`","limit":1}}`), "application/json")
	if code != http.StatusOK || !strings.Contains(apitest.MustJSON(m), secret) {
		t.Errorf("bob's own table: %d %v", code, m)
	}
}
