package toolcall

import (
	"bytes"
	"io"
	"testing"

	"datadesk"
	"datadesk/engine"
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
		call, err := DecodeArguments(io.NewSectionReader(bytes.NewReader(body), 0, int64(len(body))))
		if err != nil {
			checkClientError(t, err)
			return
		}
		args := call.Values()
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
		call, err := DecodeArguments(io.NewSectionReader(bytes.NewReader(body), 0, int64(len(body))))
		if err != nil {
			checkClientError(t, err)
			return
		}
		args := call.Values()
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
