package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk/answers"
	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/rbac"
)

// newCachedServer is the real server with an answers' cache of maxBytes.
func newCachedServer(t *testing.T, maxBytes int64) (*apitest.Server, *answers.Cache) {
	t.Helper()
	cache := answers.New(maxBytes)
	return apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 1 << 20}, Answers: cache}), cache
}

const twoRowsCSV = "region,amount\nNorth,10\nSouth,5\n"

// uploadFile uploads content as name and returns the file's id.
func uploadFile(ts *apitest.Server, token, name, content string) string {
	ts.T.Helper()
	code, m := ts.Upload(token, name, []byte(content))
	if code != http.StatusCreated {
		ts.T.Fatalf("upload %s: %d %v", name, code, m)
	}
	return m["file"].(map[string]any)["id"].(string)
}

// countArgs are a count of a file's rows.
func countArgs(fileID string) map[string]any {
	return map[string]any{"file_id": fileID, "aggregates": []any{map[string]any{"op": "count", "name": "n"}}}
}

// cachedCall calls tool and returns the status, the result and whether
// it says it came from the cache.
func cachedCall(ts *apitest.Server, token, tool string, args any) (int, map[string]any, bool) {
	ts.T.Helper()
	code, m := ts.Call(token, tool, args)
	res, _ := m["result"].(map[string]any)
	cached, _ := res["cached"].(bool)
	return code, m, cached
}

// TestAnswerCacheSecondCall: the same call on unchanged data answers from
// the cache the second time, says so over HTTP and MCP, and the metrics
// count the hits.
func TestAnswerCacheSecondCall(t *testing.T) {
	t.Parallel()
	ts, _ := newCachedServer(t, 1<<20)
	token := ts.AddUser("ana", "analyst")
	fileID := uploadFile(ts, token, "two.csv", twoRowsCSV)
	for _, tool := range []string{"files.query_table", "files.analyze_table"} {
		args := countArgs(fileID)
		if tool == "files.analyze_table" {
			args = map[string]any{"file_id": fileID, "group_by": []any{"region"}, "measures": []any{map[string]any{"op": "sum", "column": "amount"}}}
		}
		code, first, cached := cachedCall(ts, token, tool, args)
		if code != 200 || cached {
			t.Fatalf("%s first call: %d cached=%v %v", tool, code, cached, first)
		}
		code, second, cached := cachedCall(ts, token, tool, args)
		if code != 200 || !cached {
			t.Fatalf("%s second call: %d cached=%v, want 200 and cached", tool, code, cached)
		}
		delete(second["result"].(map[string]any), "cached")
		if got, want := apitest.MustJSON(second), apitest.MustJSON(first); got != want {
			t.Errorf("%s: the cached answer differs:\ngot  %s\nwant %s", tool, got, want)
		}
	}

	// Over MCP, the same call answers from the same cache.
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp",
		HTTPClient: &http.Client{Transport: apitest.Bearer(token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files_query_table", Arguments: countArgs(fileID)})
	if err != nil || res.IsError {
		t.Fatalf("mcp call: %v %v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var structured map[string]any
	_ = json.Unmarshal(raw, &structured)
	if structured["cached"] != true {
		t.Errorf("the MCP answer does not say it came from the cache: %s", raw)
	}

	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "datadesk_answer_cache_hits_total 3") {
		t.Errorf("the metrics do not count 3 hits:\n%s", grepLines(string(body), "datadesk_answer_cache"))
	}

	// A call that reads the file again writes a new file each time: it
	// never answers from the cache.
	again := map[string]any{"file_id": fileID, "group_by": []any{"region"}, "measures": []any{map[string]any{"op": "count"}},
		"reading": map[string]any{"header_rows": []any{1}}}
	for i := range 2 {
		if code, m, cached := cachedCall(ts, token, "files.analyze_table", again); code != 200 || cached {
			t.Fatalf("a call reading the file again, %d: %d cached=%v %v, want 200 and not cached", i+1, code, cached, m)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAnswerCacheWrites: a write to the owner's data between two calls
// makes the second run again: an upload, a new reading of a file, a
// delete.
func TestAnswerCacheWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		write func(ts *apitest.Server, token, fileID string)
		code  int
	}{
		{"upload", func(ts *apitest.Server, token, _ string) { uploadFile(ts, token, "two.csv", twoRowsCSV+"East,1\n") }, 200},
		{"read again", func(ts *apitest.Server, token, fileID string) {
			code, _, raw := ts.DoJSON("POST", "/v1/files/"+fileID+"/read", token, map[string]any{"header_row": 2})
			if code != http.StatusCreated {
				t.Fatalf("read again: %d %s", code, raw)
			}
		}, 200},
		{"delete", func(ts *apitest.Server, token, fileID string) {
			if code, _, raw := ts.Do("DELETE", "/v1/files/"+fileID, token, nil, ""); code != http.StatusNoContent {
				t.Fatalf("delete: %d %s", code, raw)
			}
		}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := newCachedServer(t, 1<<20)
			token := ts.AddUser("ana", "analyst")
			fileID := uploadFile(ts, token, "two.csv", twoRowsCSV)
			cachedCall(ts, token, "files.query_table", countArgs(fileID))
			if _, _, cached := cachedCall(ts, token, "files.query_table", countArgs(fileID)); !cached {
				t.Fatal("the second call did not answer from the cache")
			}
			tc.write(ts, token, fileID)
			code, m, cached := cachedCall(ts, token, "files.query_table", countArgs(fileID))
			if code != tc.code || cached {
				t.Fatalf("after the write: %d cached=%v %v, want %d and not cached", code, cached, m, tc.code)
			}
		})
	}
}

// TestAnswerCacheOwners: two owners with a file of the same name asking
// the same thing each get their own answer, and one owner's kept answer
// never answers another's call naming its file.
func TestAnswerCacheOwners(t *testing.T) {
	t.Parallel()
	ts, _ := newCachedServer(t, 1<<20)
	ana, bob := ts.AddUser("ana", "analyst"), ts.AddUser("bob", "analyst")
	anaFile := uploadFile(ts, ana, "sales.csv", twoRowsCSV)
	bobFile := uploadFile(ts, bob, "sales.csv", twoRowsCSV+"East,1\n")
	count := func(token, fileID string) (int, any, bool) {
		code, m, cached := cachedCall(ts, token, "files.query_table", countArgs(fileID))
		res, _ := m["result"].(map[string]any)
		agg, _ := res["aggregates"].(map[string]any)
		return code, agg["n"], cached
	}
	for range 2 {
		if code, n, _ := count(ana, anaFile); code != 200 || n != float64(2) {
			t.Fatalf("ana's count: %d %v, want 200 and 2", code, n)
		}
	}
	if code, n, cached := count(bob, bobFile); code != 200 || n != float64(3) || cached {
		t.Fatalf("bob's count: %d %v cached=%v, want 200, 3, not cached", code, n, cached)
	}
	if code, _, cached := count(bob, anaFile); code != http.StatusNotFound || cached {
		t.Fatalf("bob naming ana's file: %d cached=%v, want 404", code, cached)
	}
}

// TestAnswerCachePolicy: the policy decides every call before the cache
// is asked: a call answered from it is denied at once when the policy
// comes to deny it, and a call waiting for a person is never answered
// from it.
func TestAnswerCachePolicy(t *testing.T) {
	t.Parallel()
	ts, _ := newCachedServer(t, 1<<20)
	token := ts.AddUser("ana", "analyst")
	fileID := uploadFile(ts, token, "two.csv", twoRowsCSV)
	cachedCall(ts, token, "files.query_table", countArgs(fileID))
	if _, _, cached := cachedCall(ts, token, "files.query_table", countArgs(fileID)); !cached {
		t.Fatal("the second call did not answer from the cache")
	}
	setPolicy := func(rows string) {
		path := filepath.Join(ts.Dir, "policy", "policy.csv")
		if err := os.WriteFile(path, []byte(rows+rbac.DefaultPolicy), 0o600); err != nil {
			t.Fatal(err)
		}
		// The policy is read again when its file's time changes.
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy("p, user:ana, files.query_table, true, deny, allow\n")
	if code, m, _ := cachedCall(ts, token, "files.query_table", countArgs(fileID)); code != http.StatusForbidden || apitest.ErrCode(m) != "forbidden" {
		t.Fatalf("after the policy came to deny: %d %v, want 403 forbidden", code, m)
	}
	setPolicy("p, user:ana, files.query_table, true, approve, allow\n")
	if code, m, _ := cachedCall(ts, token, "files.query_table", countArgs(fileID)); code != http.StatusAccepted || m["approval"] == nil {
		t.Fatalf("after the policy came to ask a person: %d %v, want 202 and an approval", code, m)
	}
}

// TestAnswerCacheBound: many distinct calls keep the cache within its
// bytes, the oldest answers dropped.
func TestAnswerCacheBound(t *testing.T) {
	t.Parallel()
	const bound = 16 << 10
	ts, cache := newCachedServer(t, bound)
	token := ts.AddUser("ana", "analyst")
	fileID := uploadFile(ts, token, "two.csv", twoRowsCSV)
	for i := range 60 {
		args := map[string]any{"file_id": fileID, "limit": 1, "offset": i}
		if code, m, _ := cachedCall(ts, token, "files.query_table", args); code != 200 {
			t.Fatalf("call %d: %d %v", i, code, m)
		}
		if st := cache.Stats(); st.Bytes > bound {
			t.Fatalf("after %d calls the cache holds %d bytes, want at most %d", i+1, st.Bytes, bound)
		}
	}
	st := cache.Stats()
	if st.Evictions == 0 || st.Entries >= 60 {
		t.Fatalf("got %d evictions and %d entries after 60 distinct calls in %d bytes", st.Evictions, st.Entries, bound)
	}
	if _, _, cached := cachedCall(ts, token, "files.query_table", map[string]any{"file_id": fileID, "limit": 1, "offset": 0}); cached {
		t.Error("the first answer outlived 60 later ones")
	}
	if _, _, cached := cachedCall(ts, token, "files.query_table", map[string]any{"file_id": fileID, "limit": 1, "offset": 59}); !cached {
		t.Error("the last answer was dropped")
	}
}
