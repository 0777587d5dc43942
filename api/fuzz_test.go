package api_test

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"datadesk"
	"datadesk/api/apitest"
	"datadesk/engine"
	"datadesk/exports"
	"datadesk/mcpserver"
)

// checkClientError fails t unless err is a client's error with a message.
func checkClientError(t *testing.T, err error) {
	t.Helper()
	e := datadesk.AsError(err)
	if (e.Code != datadesk.Invalid && e.Code != datadesk.TooLarge) || e.Message == "" {
		t.Fatalf("bad input gave %s: %v", e.Code, err)
	}
}

// FuzzCleanFilename: any name either is refused with a 400 or comes out a
// base name without control or bidi-override characters, within the
// length limit, whose Content-Disposition parses with exactly one filename
// and gives the name back.
func FuzzCleanFilename(f *testing.F) {
	for _, s := range []string{"report.csv", "../../etc/passwd", "a\\b\\c.xlsx", "invoice\u202efdp.exe", "a\"b\".txt", "100%.csv",
		"日本語.csv", "\x00\r\n", ".", "..", " ", "con.txt", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := datadesk.CleanFilename(name)
		if err != nil {
			if datadesk.ErrorCode(err) != datadesk.Invalid {
				t.Fatalf("%q: %v", name, err)
			}
			return
		}
		if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\\") || len(got) > datadesk.MaxFilenameLen || !utf8.ValidString(got) {
			t.Fatalf("%q cleaned to %q", name, got)
		}
		if r, bad := datadesk.FirstUnsafeRune(got); bad {
			t.Fatalf("%q cleaned to %q, which holds %U", name, got, r)
		}
		cd := exports.ContentDisposition(got)
		if strings.Count(cd, "filename=") != 1 || strings.Count(cd, "filename*=") > 1 {
			t.Fatalf("%q: Content-Disposition %q", got, cd)
		}
		disp, params, err := mime.ParseMediaType(cd)
		if err != nil || disp != "attachment" {
			t.Fatalf("%q: Content-Disposition %q does not parse: %v", got, cd, err)
		}
		if params["filename"] != got && strings.TrimSpace(got) != "" {
			t.Fatalf("%q: Content-Disposition %q gives back %q", got, cd, params["filename"])
		}
	})
}

// FuzzMCPRequest posts any body to the MCP endpoint of a real server: the
// answer is never a server fault (a 500 or a dropped connection), and is
// bounded in size whatever the body asks for. Seeds are JSON-RPC messages
// and batches of every method the server has.
func FuzzMCPRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files_read","arguments":{"limit":5}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files_create","arguments":{"filename":"a.csv","columns":["x"],"rows":[[1],[2]]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files_query_table","arguments":{"file_id":"t_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"datadesk://tables/t_aaaaaaaaaaaaaaaaaaaaaaaaaa?limit=200"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approvals_get","arguments":{"approval_id":"a_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`[]`, `{}`, `null`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		f.Add([]byte(s))
	}
	ts := apitest.New(f, apitest.Options{Engine: engine.Config{MemoryLimit: "256MB", MaxTempSize: "1GB"}})
	users := ts.Users
	token := apitest.AddUser(f, users, "ana", "analyst")
	client := &http.Client{Timeout: time.Minute}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("the connection failed: %v", err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, mcpserver.MaxRequestAnswers+(1<<20)))
		if err != nil {
			t.Fatalf("the answer was cut: %v", err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("%d for %q: %.300s", resp.StatusCode, body, raw)
		}
		if len(raw) > mcpserver.MaxRequestAnswers+(512<<10) {
			t.Fatalf("%d bytes answered to %d bytes", len(raw), len(body))
		}
	})
}
