package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/mcpserver"
	"datadesk/rbac"
	"datadesk/toolcall"
)

// TestMCPAnswersBounded: a 3 KB JSON-RPC batch of 30 resources/read of a
// wide table returned 192 MB; one resource read was 6.4 MB, past the
// 1 MiB answer cap; tool answers repeated their rows in the text. Now a
// batch holds at most 8 messages, the answers to one request at most
// 2 MiB together, a resource page 256 KiB, and the text is a summary.
func TestMCPAnswersBounded(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 32 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	table := apitest.WideTable(t, ts, ana, 120)

	read := func(i int) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": i, "method": "resources/read",
			"params": map[string]any{"uri": "datadesk://tables/" + table + "?limit=200"}}
	}
	post := func(body any) (int, []byte) {
		b, _ := json.Marshal(body)
		return ts.PostJSON("/mcp", ana, bytes.NewReader(b), int64(len(b)))
	}
	var batch []any
	for i := range 30 {
		batch = append(batch, read(i+1))
	}
	if code, raw := post(batch); code != http.StatusBadRequest || !strings.Contains(string(raw), "at most 8") {
		t.Errorf("a batch of 30: got %d %.200s, want 400 naming the limit", code, raw)
	}
	// Eight queries of 20 rows of 20 wide columns would answer 6.4 MB.
	var calls []any
	for i := range 8 {
		calls = append(calls, map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
			"params": map[string]any{"name": "files_query_table", "arguments": map[string]any{"file_id": table, "limit": 20,
				"columns": []any{"col0", "col1", "col2", "col3", "col4", "col5", "col6", "col7", "col8", "col9",
					"col10", "col11", "col12", "col13", "col14", "col15", "col16", "col17", "col18", "col19"}}}})
	}
	code, raw := post(calls)
	if code != http.StatusOK {
		t.Fatalf("a batch of 8: got %d %.300s", code, raw)
	}
	if len(raw) > mcpserver.MaxRequestAnswers+(256<<10) {
		t.Errorf("a batch of 8 answered %d bytes; the answers to one request are at most %d", len(raw), mcpserver.MaxRequestAnswers)
	}
	if !strings.Contains(string(raw), "send fewer calls at once") {
		t.Errorf("a batch past the answers' budget does not say so: %.300s", raw)
	}

	cs := apitest.MCPTransports["http"](t, ts, ana)
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "datadesk://tables/" + table + "?limit=200"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	var page struct {
		Rows    [][]any `json:"rows"`
		HasMore bool    `json:"has_more"`
		Limit   int     `json:"limit"`
	}
	if err := json.Unmarshal([]byte(text), &page); err != nil {
		t.Fatal(err)
	}
	if len(text) > mcpserver.MaxPageBytes || !page.HasMore || len(page.Rows) == 0 || len(page.Rows) >= 200 || page.Limit != len(page.Rows) {
		t.Errorf("a page of a wide table: %d bytes, %d rows, has_more %v, limit %d", len(text), len(page.Rows), page.HasMore, page.Limit)
	}

	call, structured := apitest.CallMCP(t, cs, "files_query_table", map[string]any{"file_id": table, "limit": 3, "columns": []any{"col0", "col1"}})
	if rows, _ := structured["rows"].([]any); len(rows) != 3 {
		t.Fatalf("query: %v", structured)
	}
	if txt := apitest.TextOf(call); strings.Contains(txt, strings.Repeat("w", 100)) || len(txt) > mcpserver.MaxText {
		t.Errorf("the text beside a query's rows repeats them (%d bytes): %.200s", len(txt), txt)
	}
}

// TestMCPAppliesPlatformRows: with a platform's own files.read row gone,
// HTTP refused it reading a user's table for them, but MCP's
// resources/read and approvals_get answered. MCP now decides as HTTP does,
// for the user and for the platform acting for them.
func TestMCPAppliesPlatformRows(t *testing.T) {
	t.Parallel()
	policy := strings.Replace(rbac.DefaultPolicy, "p, role:platform, files.read, r.attrs.ActingFor, allow, allow\n", "", 1)
	policy = "p, role:analyst, files.create, r.attrs.Format == 'csv', approve, allow\n" + policy
	ts := apitest.New(t, apitest.Options{Policy: policy})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	bot := apitest.AddUser(t, users, "chatbot", "platform")
	root := apitest.AddUser(t, users, "root", "admin")
	_, m := ts.Upload(ana, "a.csv", []byte("x\n1\n"))
	table := m["file"].(map[string]any)["table_id"].(string)
	code, m := ts.Call(ana, "files.create", map[string]any{"filename": "n.csv", "content": "a,b\n1,2\n"})
	if code != http.StatusAccepted {
		t.Fatalf("create: %d %v", code, m)
	}
	approval := m["approval"].(map[string]any)["id"].(string)
	if code, m, _ := ts.Do("POST", "/v1/approvals/"+approval+"/approve", root, nil, ""); code != http.StatusOK {
		t.Fatalf("approve: %d %v", code, m)
	}
	if code, _ := ts.As("GET", "/v1/tables/"+table+"/rows", bot, "ana", nil); code != http.StatusForbidden {
		t.Errorf("HTTP rows for ana by the platform: got %d, want 403", code)
	}
	cs := apitest.ConnectMCP(t, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp",
		HTTPClient: &http.Client{Transport: apitest.Headers{"Authorization": "Bearer " + bot, "X-On-Behalf-Of": "ana"}}})
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "datadesk://tables/" + table}); err == nil {
		t.Errorf("MCP resources/read for ana by the platform: read, want refused")
	}
	_, structured := apitest.CallMCP(t, cs, mcpserver.ApprovalsTool, map[string]any{"approval_id": approval})
	if strings.Contains(apitest.MustJSON(structured), "download_url") {
		t.Errorf("MCP approvals_get for ana by a platform that may not read gave the result: %s", apitest.MustJSON(structured))
	}
	// Ana herself gets her result.
	own := apitest.MCPTransports["http"](t, ts, ana)
	_, structured = apitest.CallMCP(t, own, mcpserver.ApprovalsTool, map[string]any{"approval_id": approval})
	if !strings.Contains(apitest.MustJSON(structured), "download_url") {
		t.Errorf("the caller's own approved result: %s", apitest.MustJSON(structured))
	}
}

// TestApprovalResultsStayWithCaller: an admin read an analyst's approved
// copy, download link and all, through GET /v1/approvals/{id}. An approver
// now sees what the call asked and a summary of what it did.
func TestApprovalResultsStayWithCaller(t *testing.T) {
	t.Parallel()
	policy := "p, role:analyst, files.create, r.attrs.Format == 'csv', approve, allow\n" + rbac.DefaultPolicy
	ts := apitest.New(t, apitest.Options{Policy: policy})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	root := apitest.AddUser(t, users, "root", "admin")
	code, m := ts.Call(ana, "files.create", map[string]any{"filename": "copy.csv", "columns": []any{"id"}, "rows": []any{[]any{"0001"}, []any{"0002"}}})
	if code != http.StatusAccepted {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["approval"].(map[string]any)["id"].(string)
	code, m, raw := ts.Do("POST", "/v1/approvals/"+id+"/approve", root, nil, "")
	if code != http.StatusOK || strings.Contains(string(raw), "download_url") {
		t.Errorf("the approver's answer to approving: %d %s", code, raw)
	}
	_, m, raw = ts.Do("GET", "/v1/approvals/"+id, root, nil, "")
	result, _ := m["approval"].(map[string]any)["result"].(map[string]any)
	if strings.Contains(string(raw), "download_url") || strings.Contains(string(raw), "/content") || result["filename"] != "copy.csv" || result["row_count"] == nil {
		t.Errorf("the approver's view: %s", raw)
	}
	_, _, raw = ts.Do("GET", "/v1/approvals/"+id, ana, nil, "")
	if !strings.Contains(string(raw), "download_url") {
		t.Errorf("the caller's view lacks the result: %s", raw)
	}
}

// TestMCPStdioChecksEveryCall: `datadesk mcp` kept the role and token it
// started with after the user was demoted and the token revoked. Each
// call now checks the token and takes the user's role as it is.
func TestMCPStdioChecksEveryCall(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	cs := apitest.MCPTransports["stdio"](t, ts, ana)
	create := map[string]any{"filename": "n.txt", "content": "x"}
	if res, structured := apitest.CallMCP(t, cs, "files_create", create); res.IsError || structured["file"] == nil {
		t.Fatalf("create as an analyst: %s", apitest.MustJSON(structured))
	}
	if err := users.SetRole("ana", "viewer"); err != nil {
		t.Fatal(err)
	}
	if _, structured := apitest.CallMCP(t, cs, "files_create", create); structured["approval"] == nil {
		t.Errorf("create after the demotion to viewer: %s, want to wait for approval", apitest.MustJSON(structured))
	}
	if err := users.RevokeTokens("ana"); err != nil {
		t.Fatal(err)
	}
	if res, structured := apitest.CallMCP(t, cs, "files_read", map[string]any{}); !res.IsError || !strings.Contains(apitest.MustJSON(structured), "unauthenticated") {
		t.Errorf("a call after the token was revoked: %s", apitest.MustJSON(structured))
	}
}

// TestSignedLinksEndWithCredentials: signed links worked for up to 10
// minutes after their user was deleted. They now stop when the user's
// tokens are revoked or the user is removed.
func TestSignedLinksEndWithCredentials(t *testing.T) {
	t.Parallel()
	// Links count whole seconds: the server's clock is moved on past the
	// second of the revocation rather than waited for.
	var ahead atomic.Int64
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 1 << 20, Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }}})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	bob := apitest.AddUser(t, users, "bob", "analyst")
	link := func(token string) string {
		_, m := ts.Upload(token, "a.csv", []byte("x\n1\n"))
		return m["file"].(map[string]any)["download_url"].(string)
	}
	get := func(url string) int {
		resp, err := http.Get(ts.URL + url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	anaLink, bobLink := link(ana), link(bob)
	if get(anaLink) != http.StatusOK || get(bobLink) != http.StatusOK {
		t.Fatalf("fresh links do not work")
	}
	if err := users.RevokeTokens("ana"); err != nil {
		t.Fatal(err)
	}
	if code := get(anaLink); code != http.StatusUnauthorized {
		t.Errorf("a link after its user's tokens were revoked: got %d, want 401", code)
	}
	fresh, err := users.AddToken("ana")
	if err != nil {
		t.Fatal(err)
	}
	ahead.Store(int64(time.Second))
	if code := get(link(fresh)); code != http.StatusOK {
		t.Errorf("a link made with a new token: got %d, want 200", code)
	}
	if err := users.Remove("bob"); err != nil {
		t.Fatal(err)
	}
	if code := get(bobLink); code != http.StatusUnauthorized {
		t.Errorf("a link after its user was removed: got %d, want 401", code)
	}
}

// TestMCPRowsSetAside: the rows of tools/calls too large to hold are set
// aside and taken back by each call, under references no client can name:
// a reference a client writes itself is only text.
func TestMCPRowsSetAside(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 32 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	post := func(body any) (int, []byte) {
		b, _ := json.Marshal(body)
		return ts.PostJSON("/mcp", ana, bytes.NewReader(b), int64(len(b)))
	}
	create := func(id int, name string, rows any) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "files_create",
			"arguments": map[string]any{"filename": name, "rows": rows, "columns": []any{"id", "note"}}}}
	}
	// A reference in a call's own arguments is text, never set-aside rows.
	code, raw := post(create(1, "forged.csv", "datadesk-rows-r_aaaaaaaaaaaaaaaaaaaaaaaaaa"))
	if code != http.StatusOK || !strings.Contains(string(raw), `"isError":true`) || !strings.Contains(string(raw), "rows") {
		t.Errorf("a forged reference: got %d %.300s, want a tool error about rows", code, raw)
	}
	rows := make([]any, 12_000)
	for i := range rows {
		rows[i] = []any{i, "a note long enough to make the call large"}
	}
	if b, _ := json.Marshal([]any{create(1, "a.csv", rows), create(2, "b.csv", rows)}); len(b) <= toolcall.BodyInMemory {
		t.Fatalf("the batch has %d bytes, not more than the %d held", len(b), toolcall.BodyInMemory)
	}
	code, raw = post([]any{create(1, "a.csv", rows), create(2, "b.csv", rows)})
	var answers []struct {
		Result struct {
			Structured struct {
				File toolcall.File `json:"file"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &answers); code != http.StatusOK || err != nil || len(answers) != 2 {
		t.Fatalf("a large batch: got %d %.300s, want two answers", code, raw)
	}
	for i, a := range answers {
		if n := a.Result.Structured.File.RowCount; n == nil || *n != 12_000 {
			t.Errorf("a large batch, call %d: %v rows, want 12,000", i+1, n)
		}
	}
}
