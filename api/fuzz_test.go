package api

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
	"datadesk/engine"
	"datadesk/exports"
	"datadesk/rbac"
)

// FuzzToolArguments feeds any body to the tool-argument decoder and every
// tool's schema validator: bad input is a 400 or 413 with a message, never
// a panic or an internal error, and what passes has names without control
// or bidi-override characters. Seeds are in testdata/fuzz/FuzzToolArguments.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		`{"arguments": {"filename": "a.csv", "columns": ["a", {"key": "b", "label": "B", "type": "number"}], "rows": [[1, 2], {"a": "x"}]}}`,
		`{"arguments": {"file_id": "f_aaaaaaaaaaaaaaaaaaaaaaaaaa", "filters": [{"column": "a", "op": "in", "value": [1, "2", null]}], "group_by": ["a"], "aggregates": [{"op": "sum", "column": "b", "name": "s"}], "limit": 20, "show": true}}`,
		`{"arguments": {"session_only": false, "limit": 100}}`,
		`{"arguments": {"filename": "a\u202e.txt", "content": "x"}}`,
		`{"arguments": {"columns": [{"key": "a\u0000"}], "rows": []}}`,
		`{"arguments": {"limit": 1e400, "offset": -0}}`,
		`{"arguments": null}`, `[]`, `{"arguments": {}} {}`, `{"x": 1}`,
	} {
		f.Add([]byte(s))
	}
	tools, err := loadTools()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		args, err := decodeArguments(io.NewSectionReader(bytes.NewReader(body), 0, int64(len(body))))
		if err != nil {
			checkClientError(t, err)
			return
		}
		for _, tl := range tools {
			if err := tl.schema.validate(args); err != nil {
				checkClientError(t, err)
				continue
			}
			callAttrs(tl, args)
			if name, ok := args["filename"].(string); ok {
				if _, bad := datadesk.FirstUnsafeRune(name); bad {
					t.Fatalf("%s: filename %q passed validation", tl.Name, name)
				}
			}
		}
	})
}

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
		got, err := cleanFilename(name)
		if err != nil {
			if datadesk.ErrorCode(err) != datadesk.Invalid {
				t.Fatalf("%q: %v", name, err)
			}
			return
		}
		if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\\") || len(got) > maxFilenameLen || !utf8.ValidString(got) {
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
	ts, users := newServerFull(f, Config{}, rbac.DefaultPolicy, engine.Config{MemoryLimit: "256MB", MaxTempSize: "1GB"})
	token := addUser(f, users, "ana", "analyst")
	client := &http.Client{Timeout: time.Minute}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _ := http.NewRequest("POST", ts.url+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("the connection failed: %v", err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, mcpMaxRequestAnswers+(1<<20)))
		if err != nil {
			t.Fatalf("the answer was cut: %v", err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("%d for %q: %.300s", resp.StatusCode, body, raw)
		}
		if len(raw) > mcpMaxRequestAnswers+(512<<10) {
			t.Fatalf("%d bytes answered to %d bytes", len(raw), len(body))
		}
	})
}

// FuzzFilesCreate feeds any body to files.create's way with rows: decode,
// validate against the schema, type the columns and write each format.
// Bad input is a 400 or 413 naming the argument, never a panic.
func FuzzFilesCreate(f *testing.F) {
	for _, s := range []string{
		`{"arguments": {"filename": "a.xlsx", "columns": ["id", {"key": "n", "label": "N", "type": "number"}], "rows": [["0001", 2.50], {"id": "x", "n": "3"}]}}`,
		`{"arguments": {"filename": "a.csv", "columns": [{"key": "d", "label": "D", "type": "datetime"}], "rows": [["2024-01-02T03:04:05.123456+02:00"], [null]]}}`,
		`{"arguments": {"filename": "a.json", "columns": ["a", "b"], "rows": [[true, 1e400], [false, "12345678901234567890"]]}}`,
		`{"arguments": {"filename": "a.csv", "columns": ["a"], "rows": [[1, 2, 3]]}}`,
		`{"arguments": {"filename": "a.csv", "columns": ["a"], "rows": [{"b": 1}]}}`,
		`{"arguments": {"filename": "a.csv", "columns": [], "rows": "x"}}`,
	} {
		f.Add([]byte(s))
	}
	tools, err := loadTools()
	if err != nil {
		f.Fatal(err)
	}
	create := tools["files.create"]
	f.Fuzz(func(t *testing.T, body []byte) {
		args, err := decodeArguments(io.NewSectionReader(bytes.NewReader(body), 0, int64(len(body))))
		if err != nil {
			checkClientError(t, err)
			return
		}
		if err := create.schema.validate(args); err != nil {
			checkClientError(t, err)
			return
		}
		rows := rowsArg(args)
		cols, _ := args["columns"].([]any)
		if rows == nil || len(cols) == 0 {
			return
		}
		for _, ext := range []string{".xlsx", ".csv", ".json"} {
			tbl, err := buildTable(cols, rows, ext == ".xlsx")
			if err != nil {
				checkClientError(t, err)
				return
			}
			if err := writeTable(io.Discard, ext, tbl.exportSource(), ""); err != nil {
				checkClientError(t, err)
			}
			if n, err := engine.CountRows(tbl.source("t")); err != nil || n != rows.Len() {
				t.Fatalf("%s: %d rows of %d (%v)", ext, n, rows.Len(), err)
			}
		}
	})
}
