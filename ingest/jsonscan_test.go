package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
)

// jsonBothPaths are JSON files both readers take; fast says whether
// DuckDB's reader may stage them.
var jsonBothPaths = []struct {
	name string
	body string
	fast bool
}{
	{"array of records", `[{"id": "007", "n": 12345678901234567890, "x": 1.5, "t": "", "z": null, "b": true},
	  {"x": -0.25, "id": "010", "n": 3, "w": "late key", "b": false, "t": "text"},
	  {"id": "3/14/2025", "x": 0.0001, "n": -42, "q": "€ £ \u00e9 \"quoted\" \\ \/ \n"}]`, true},
	{"ndjson with blank lines", "{\"a\": 1, \"b\": \"2024-03-01 10:00:00.123456\", \"c\": \"\"}\n\n{\"b\": \"2024-03-02\", \"a\": 2}\r\n{\"a\": 100.0, \"c\": null}\n\n", true},
	{"ndjson numbers and strings", "{\"v\": \"1\", \"w\": 1}\n{\"v\": 2, \"w\": 2.5}\n", true},
	{"trailing zero", `[{"a": 1.50}, {"a": 2}]`, false},
	{"exponent", "{\"a\": 3.6e-05}\n{\"a\": 1}\n", false},
	{"minus zero", `[{"a": -0}]`, false},
	{"sixteen digits", `[{"a": 1234567890.123456}]`, false},
	{"tiny", `[{"a": 0.00001}]`, false},
	{"nested", `[{"a": {"b": 1}}, {"a": [1, 2]}]`, false},
	{"keys differing in case", `[{"a": 1, "A": 2}]`, false},
	{"repeated key", `[{"a": 1, "a": 2}]`, false},
	{"record across lines", "{\"a\": 1,\n\"b\": 2}\n", false},
	{"two records on a line", "{\"a\": 1} {\"a\": 2}\n", false},
	{"arrays with a header", `[["a", "b"], [1, "x"]]`, false},
	{"lone surrogate", `[{"a": "\ud800"}]`, false},
	{"escaped key", `[{"a\u00e9": "x"}]`, true},
	{"digits as strings", `[{"code": "0012", "v": "-5", "w": "1.5", "d": "2024-01-02", "p": "+5"}, {"code": "0340", "v": "3", "w": "-2.25", "d": "2024-01-03", "p": "7"}]`, true},
	{"digit strings without signs", "{\"c\": \"12\", \"d\": \"1.5\"}\n{\"c\": \"0034\", \"d\": \"2\"}\n", true},
	{"compact, long strings with escapes", "{\"a\":\"abcdefgh\\\"ijklmnop\",\"b\":\"0123456789abcdef\u00e9xyz\"}\n{\"b\":\"\\\\12345678\",\"a\":\"twelve chars\"}\n", true},
	{"escaped control character", "{\"a\": \"abcdefghij\\u0001k\"}\n", true},
}

// TestJSONSameDecisionsBothPaths ingests each file through DuckDB's
// reader where it may, and always through the Go reader, and compares the
// columns, their types and reasons, and every row.
func TestJSONSameDecisionsBothPaths(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	for _, tc := range jsonBothPaths {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]*catalog.Table
			var rows [2][][]any
			for i, fast := range []bool{false, true} {
				tmp := filepath.Join(fx.store.IncomingDir(), datadesk.NewID("up"))
				if err := os.WriteFile(tmp, []byte(tc.body), 0o600); err != nil {
					t.Fatal(err)
				}
				res, err := fx.in.Read(ctx, tmp, "t.json", fx.store.IncomingDir())
				if err != nil {
					t.Fatal(err)
				}
				if staged := res.Tables[0].JSON != nil; staged != tc.fast {
					t.Fatalf("staged by DuckDB: %v, want %v", staged, tc.fast)
				}
				if !fast {
					res.Tables[0].JSON = nil
				}
				f, err := fx.store.AddFile(ctx, engine.NewFile{Filename: "t.json", ContentType: res.ContentType, TempPath: tmp, Tables: res.Tables})
				if err != nil {
					t.Fatalf("fast %v: %v", fast, err)
				}
				got[i] = &f.Tables[0]
				rows[i] = fx.rows(got[i].ID)
			}
			if g, w := fmt.Sprint(got[1].Columns), fmt.Sprint(got[0].Columns); g != w {
				t.Errorf("columns differ:\nDuckDB %s\nGo     %s", g, w)
			}
			if g, w := fmt.Sprintf("%#v", rows[1]), fmt.Sprintf("%#v", rows[0]); g != w {
				t.Errorf("rows differ:\nDuckDB %s\nGo     %s", g, w)
			}
		})
	}
}

// TestJSONStagedExactly checks what the DuckDB path stores: numbers as
// written, "" apart from null, keys in file order.
func TestJSONStagedExactly(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f, err := fx.ingestBytes("t.ndjson", []byte("{\"big\": 12345678901234567890, \"dec\": 1.25, \"s\": \"\"}\n\n{\"s\": null, \"dec\": 0.5, \"big\": 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	var keys []string
	for _, c := range tb.Columns {
		keys = append(keys, c.Label+":"+c.Type)
	}
	if g := strings.Join(keys, " "); g != "big:text dec:decimal s:text" {
		t.Errorf("columns %s", g)
	}
	if g := fmt.Sprintf("%v", fx.rows(tb.ID)); !strings.Contains(g, "12345678901234567890") || !strings.Contains(g, "1.25") {
		t.Errorf("rows %s", g)
	}
}

// TestJSONLongCellOnBothPaths: a cell over the limit is refused, naming it.
func TestJSONLongCellOnBothPaths(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	long := strings.Repeat("x", engine.MaxCellChars+1)
	_, err := fx.ingestBytes("t.json", []byte(`[{"a": "`+long+`"}]`))
	if datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), "characters") {
		t.Fatalf("err = %v", err)
	}
}

// TestJSONTooWideOnBothPaths: records with more distinct keys than a table
// may have columns are refused, naming the limit.
func TestJSONTooWideOnBothPaths(t *testing.T) {
	fx := newFixture(t)
	var b strings.Builder
	for i := 0; i <= engine.MaxColumns; i++ {
		fmt.Fprintf(&b, "{\"k%d\": %d}\n", i, i)
	}
	_, err := fx.ingestBytes("t.ndjson", []byte(b.String()))
	if datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), fmt.Sprint(engine.MaxColumns)) {
		t.Fatalf("err = %v", err)
	}
}

// TestScanPartsSameAsOne scans files of records one per line in one to
// five parts: the same columns in the same order, the same kinds and the
// same verdict as one pass, including a key first seen in a later part,
// keys differing in case in two parts, and faults in any part.
func TestScanPartsSameAsOne(t *testing.T) {
	lines := func(recs ...string) string { return strings.Join(recs, "\n") + "\n" }
	var many []string
	for i := 0; i < 40; i++ {
		many = append(many, fmt.Sprintf(`{"id": "%03d", "n": %d, "s": "x"}`, i, i))
	}
	files := map[string]string{
		"late key":             lines(append(append([]string{}, many...), `{"late": true, "id": "x"}`)...),
		"case in another part": lines(append(append([]string{`{"a": 1}`}, many...), `{"A": 2}`)...),
		"fault in a late part": lines(append(append([]string{}, many...), `{"a": 1.50}`)...),
		"blank lines":          "\n\n" + lines(many...) + "\n\n\n",
		"no final newline":     strings.TrimSuffix(lines(many...), "\n"),
		"one line":             `{"a": "b"}`,
	}
	for _, tc := range jsonBothPaths {
		if strings.HasPrefix(strings.TrimSpace(tc.body), "{") {
			files[tc.name] = tc.body
		}
	}
	dir := t.TempDir()
	for name, body := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, datadesk.NewID("j"))
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			describe := func(parts int) string {
				flat, ok, err := scanParts(f, int64(len(body)), shapeLines, parts)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					return "refused"
				}
				var b strings.Builder
				fmt.Fprintf(&b, "longest %d: ", flat.maxRecord)
				for _, c := range flat.cols {
					fmt.Fprintf(&b, "%s%v ", c.label, c.kinds)
				}
				return b.String()
			}
			want := describe(1)
			for parts := 2; parts <= 5; parts++ {
				if got := describe(parts); got != want {
					t.Errorf("%d parts: %s, one pass: %s", parts, got, want)
				}
			}
		})
	}
}

// TestPlainRun holds the eight-bytes-at-a-time run of plain string bytes
// to the byte-at-a-time test, over every stop byte at every offset.
func TestPlainRun(t *testing.T) {
	for _, stop := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xc3, 0xff} {
		for at := 0; at < 20; at++ {
			b := []byte(strings.Repeat("a~ !#[]{}", 3))[:20]
			b[at] = stop
			for from := 0; from <= at; from++ {
				if got := plainRun(b, from); got != at {
					t.Errorf("stop %#x at %d, from %d: run ends at %d", stop, at, from, got)
				}
			}
		}
	}
	if _, ok, err := scanFlatBytes(t, "{\"a\": \"abcdefghij\x01k\"}\n"); ok || err != nil {
		t.Errorf("a raw control character in a string: staged %v, %v", ok, err)
	}
	if got := plainRun([]byte("plain ascii, 25 bytes ok."), 0); got != 25 {
		t.Errorf("a plain run ends at %d, want 25", got)
	}
}

// scanFlatBytes is scanFlat of a file of NDJSON holding body.
func scanFlatBytes(t *testing.T, body string) (*flatJSON, bool, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.ndjson")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return scanFlat(path, shapeLines)
}
