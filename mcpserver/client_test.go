package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"datadesk/api/apitest"
	"datadesk/mcpserver"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCP runs the tools over both transports and compares each answer
// with the HTTP path's: results, denials, approvals, the audit log, and the
// tables as resources read page by page.
func TestMCP(t *testing.T) {
	t.Parallel()
	for name, connect := range apitest.MCPTransports {
		t.Run(name, func(t *testing.T) {
			ts, ana, fileID := apitest.SetupOrders(t)
			users := ts.Users
			vic := apitest.AddUser(t, users, "vic", "viewer")
			root := apitest.AddUser(t, users, "root", "admin")
			bot := apitest.AddUser(t, users, "bot", "platform")
			cs := connect(t, ts, ana)

			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
				if strings.Contains(apitest.MustJSON(tl.InputSchema), "source_expression") {
					t.Errorf("%s carries source_expression", tl.Name)
				}
			}
			slices.Sort(names)
			if want := []string{"approvals_get", "files_analyze_table", "files_create", "files_query_table", "files_read"}; !slices.Equal(names, want) {
				t.Errorf("tools %v, want %v", names, want)
			}

			queries := []map[string]any{
				{"file_id": fileID, "filters": []any{map[string]any{"column": "region", "op": "eq", "value": "north"}}},
				{"file_id": fileID, "group_by": []any{"region"}, "aggregates": []any{map[string]any{"op": "sum", "column": "amount"}}},
				{"file_id": fileID, "columns": []any{"order_id"}, "limit": 2},
			}
			for _, q := range queries {
				res, got := apitest.CallMCP(t, cs, "files_query_table", q)
				_, m := ts.Call(ana, "files.query_table", q)
				if res.IsError || apitest.MustJSON(got) != apitest.MustJSON(m["result"]) {
					t.Errorf("query %s:\n mcp  %s\n http %s", apitest.MustJSON(q), apitest.MustJSON(got), apitest.MustJSON(m["result"]))
				}
				if txt := apitest.TextOf(res); !strings.Contains(txt, "rows match in "+fileID) {
					t.Errorf("summary %q", txt)
				}
			}
			// An error is a tool error the model can read, as over HTTP.
			bad := map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "colour", "op": "eq", "value": "red"}}}
			res, got := apitest.CallMCP(t, cs, "files_query_table", bad)
			code, m := ts.Call(ana, "files.query_table", bad)
			if !res.IsError || code != http.StatusBadRequest || apitest.MustJSON(got) != apitest.MustJSON(m) {
				t.Errorf("unknown column:\n mcp  %v %s\n http %d %s", res.IsError, apitest.MustJSON(got), code, apitest.MustJSON(m))
			}

			res, got = apitest.CallMCP(t, cs, "files_create", map[string]any{"filename": "note.txt", "content": "hello"})
			file, _ := got["file"].(map[string]any)
			if res.IsError || file == nil || file["filename"] != "note.txt" || !strings.Contains(apitest.TextOf(res), "download /v1/files/") {
				t.Fatalf("files_create: %v %s", apitest.TextOf(res), apitest.MustJSON(got))
			}
			_, m = ts.Call(ana, "files.create", map[string]any{"filename": "note.txt", "content": "hello"})
			if g, w := keysOf(file), keysOf(m["result"].(map[string]any)["file"].(map[string]any)); !slices.Equal(g, w) {
				t.Errorf("files_create keys %v, over HTTP %v", g, w)
			}
			if code, body := ts.Get("", file["download_url"].(string)); code != 200 || string(body) != "hello" {
				t.Errorf("download of the MCP-made file: %d %s", code, body)
			}

			// Denied over MCP as over HTTP.
			res, got = apitest.CallMCP(t, connect(t, ts, bot), "files_read", map[string]any{})
			code, m = ts.Call(bot, "files.read", map[string]any{})
			if !res.IsError || code != http.StatusForbidden || apitest.MustJSON(got) != apitest.MustJSON(m) {
				t.Errorf("denied:\n mcp  %v %s\n http %d %s", res.IsError, apitest.MustJSON(got), code, apitest.MustJSON(m))
			}

			// An approval-needing call answers pending with its id and how
			// to go on; approvals_get fetches the result once approved.
			vcs := connect(t, ts, vic)
			res, got = apitest.CallMCP(t, vcs, "files_create", map[string]any{"filename": "v.txt", "content": "by vic"})
			ap, _ := got["approval"].(map[string]any)
			id, _ := ap["id"].(string)
			if res.IsError || ap["status"] != "pending" || id == "" {
				t.Fatalf("pending: %v %s", res.IsError, apitest.MustJSON(got))
			}
			if txt := apitest.TextOf(res); !strings.Contains(txt, id) || !strings.Contains(txt, "approvals_get") || !strings.Contains(txt, "/approve") {
				t.Errorf("pending text %q", txt)
			}
			code, m = ts.Call(vic, "files.create", map[string]any{"filename": "v.txt", "content": "by vic"})
			if code != http.StatusAccepted || keysOf(m["approval"].(map[string]any))[0] != keysOf(ap)[0] {
				t.Errorf("over HTTP: %d %v", code, m)
			}
			res, got = apitest.CallMCP(t, vcs, "approvals_get", map[string]any{"approval_id": id})
			if res.IsError || got["approval"].(map[string]any)["status"] != "pending" {
				t.Errorf("before approval: %s", apitest.MustJSON(got))
			}
			if code, m, _ := ts.Do("POST", "/v1/approvals/"+id+"/approve", root, nil, ""); code != 200 {
				t.Fatalf("approve: %d %v", code, m)
			}
			res, got = apitest.CallMCP(t, vcs, "approvals_get", map[string]any{"approval_id": id})
			_, m, _ = ts.Do("GET", "/v1/approvals/"+id, vic, nil, "")
			if res.IsError || apitest.MustJSON(got) != apitest.MustJSON(m["approval"].(map[string]any)["result"]) {
				t.Errorf("approved result:\n mcp  %s\n http %s", apitest.MustJSON(got), apitest.MustJSON(m["approval"]))
			}
			if res, _ := apitest.CallMCP(t, cs, "approvals_get", map[string]any{"approval_id": id}); !res.IsError {
				t.Errorf("another user fetched vic's approval")
			}

			// Every MCP call is in the audit log with its decision.
			_, m, _ = ts.Do("GET", "/v1/audit?limit=1000", root, nil, "")
			seen := map[string]bool{}
			for _, x := range m["entries"].([]any) {
				e := x.(map[string]any)
				seen[fmt.Sprint(e["action"], " ", e["user"], " ", e["outcome"])] = true
			}
			for _, want := range []string{"files.query_table ana ok", "files.query_table ana invalid", "files.create ana ok",
				"files.read bot forbidden", "files.create vic pending", "approvals.get vic ok"} {
				if !seen[want] {
					t.Errorf("audit lacks %q", want)
				}
			}

			checkTableResource(t, cs, fileID)
		})
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkTableResource reads a stored table as a resource, a page at a time.
func checkTableResource(t *testing.T, cs *mcp.ClientSession, fileID string) {
	t.Helper()
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != mcpserver.TableURITemplate {
		t.Fatalf("templates: %v %v", err, tmpl)
	}
	tests := []struct {
		uri   string
		rows  int
		first string
		fails bool
	}{
		{"datadesk://tables/" + fileID, 4, "000123", false},
		{"datadesk://tables/" + fileID + "?offset=1&limit=2", 2, "123", false},
		{"datadesk://tables/" + fileID + "?limit=100000", 0, "", true},
		{"datadesk://tables/t_aaaaaaaaaaaaaaaaaaaaaaaaaa", 0, "", true},
	}
	for _, tc := range tests {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tc.uri})
		if tc.fails {
			if err == nil {
				t.Errorf("%s: read, want an error", tc.uri)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		var page struct {
			Rows  [][]any `json:"rows"`
			Total int     `json:"total"`
		}
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Rows) != tc.rows || page.Total != 4 || page.Rows[0][0] != tc.first {
			t.Errorf("%s: got %s", tc.uri, res.Contents[0].Text)
		}
	}
}

// TestMCPRefusesUnauthenticated: no token, no MCP session.
func TestMCPRefusesUnauthenticated(t *testing.T) {
	t.Parallel()
	ts, _, _ := apitest.SetupOrders(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "anon", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil); err == nil {
		cs.Close()
		t.Fatal("an unauthenticated client connected")
	}
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: apitest.Bearer("not-a-token")}}
	if cs, err := client.Connect(ctx, tr, nil); err == nil {
		cs.Close()
		t.Fatal("a client with a wrong token connected")
	}
	code, m, _ := ts.Do("POST", "/mcp", "", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "application/json")
	if code != http.StatusUnauthorized || apitest.ErrCode(m) != "unauthenticated" {
		t.Errorf("raw POST /mcp: %d %v", code, m)
	}
}

// TestMCPBehindProxy: a reverse proxy on the same machine forwards the
// public Host; an authenticated request is served.
func TestMCPBehindProxy(t *testing.T) {
	t.Parallel()
	ts, token, _ := apitest.SetupOrders(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}`
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
	req.Host = "datadesk.example.com"
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"serverInfo"`) {
		t.Errorf("got %d %s", resp.StatusCode, raw)
	}
}
