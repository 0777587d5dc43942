package api

import (
	"bytes"
	"mime"
	"strings"
	"testing"
	"unicode/utf8"

	"datadesk"
	"datadesk/exports"
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
		args, err := decodeArguments(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			checkClientError(t, err)
			return
		}
		for _, tl := range tools {
			if err := tl.schema.validate("", args); err != nil {
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
