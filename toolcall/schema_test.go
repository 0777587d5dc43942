package toolcall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"datadesk"
)

// argsOf decodes a call's body as the server does.
func argsOf(t testing.TB, body string) *Arguments {
	t.Helper()
	args, err := DecodeArguments(io.NewSectionReader(strings.NewReader(body), 0, int64(len(body))))
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// TestArgumentErrors checks how the standard validator's errors are
// worded: each names the argument, what was wrong and what is allowed.
func TestArgumentErrors(t *testing.T) {
	tools, err := loadTools()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, args, field, message string
	}{
		{"files.read", `{"limit": "5"}`, "limit", "argument limit must be integer, not string"},
		{"files.read", `{"limit": 0}`, "limit", "argument limit is 0; it must be at least 1 (allowed: 1 to 100)"},
		{"files.read", `{"nope": 1}`, "nope", "argument nope is not a known argument; allowed: "},
		{"files.query_table", `{}`, "file_id", "argument file_id is required"},
		{"files.query_table", `{"file_id": "f", "direction": "up"}`, "direction", `argument direction is "up"; allowed: asc, desc`},
		{"files.query_table", `{"file_id": "f", "filters": [{"column": "a", "op": "eq", "value": {"x": 1}}]}`,
			"filters[0].value", "argument filters[0].value is object; allowed: string or number or boolean or null or an array of string or number or boolean or null"},
		{"files.query_table", `{"file_id": "f", "filters": [{"column": "a", "op": "eq", "value": [1, {"x": 1}]}]}`,
			"filters[0].value[1]", "argument filters[0].value[1] must be string or number or boolean or null, not object"},
		{"files.query_table", `{"file_id": "", "z": 1}`, "file_id", "argument file_id must not be empty"},
		{"files.create", `{"filename": "a\u202eb.csv", "content": "x"}`, "filename", "holds the character U+202E"},
		{"files.create", `{"filename": "t.csv", "columns": ["a"], "rows": [[1], [2, {"x": 1}]]}`,
			"rows[1][1]", "argument rows[1][1] must be string or number or boolean or null, not object"},
		{"files.create", `{"filename": "t.csv", "columns": ["a"], "rows": [7]}`,
			"rows[0]", "argument rows[0] is integer; allowed: an array of string or number or boolean or null or object"},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			err := tools[tc.tool].check(argsOf(t, `{"arguments": `+tc.args+`}`))
			e := datadesk.AsError(err)
			if err == nil || e.Code != datadesk.Invalid {
				t.Fatalf("got %v, want invalid", err)
			}
			if e.Field != tc.field || !strings.Contains(e.Message, tc.message) {
				t.Errorf("got %s: %q\nwant %s: %q", e.Field, e.Message, tc.field, tc.message)
			}
		})
	}
}

// BenchmarkCheckRows checks a files.create call of 100,000 rows of ten
// cells, the most a call takes.
func BenchmarkCheckRows(b *testing.B) {
	tools, err := loadTools()
	if err != nil {
		b.Fatal(err)
	}
	var body bytes.Buffer
	body.WriteString(`{"arguments": {"filename": "t.csv", "columns": ["a","b","c","d","e","f","g","h","i","j"], "rows": [`)
	for i := range 100_000 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `[%d, "north", 12.5, true, null, "2024-01-0%d", -3, "x", 0.001, "id-%d"]`, i, i%9+1, i)
	}
	body.WriteString(`]}}`)
	args := argsOf(b, body.String())
	b.SetBytes(int64(body.Len()))
	for b.Loop() {
		if err := tools["files.create"].check(args); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRowShapesOnlyWhereTypesDecide checks that rows are checked by their
// shape only under a schema that asks nothing but types.
func TestRowShapesOnlyWhereTypesDecide(t *testing.T) {
	tests := []struct {
		schema string
		want   bool
	}{
		{`{"anyOf": [{"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}}, {"type": "object", "additionalProperties": {"type": ["string", "null"]}}]}`, true},
		{`{"type": "array", "items": {"type": "string", "maxLength": 3}}`, false},
		{`{"type": "array", "items": {"type": ["integer", "null"]}}`, false},
		{`{"type": "array", "maxItems": 2}`, false},
		{`{"type": "object", "properties": {"a": {"type": "string"}}}`, false},
		{`true`, true},
	}
	for _, tc := range tests {
		var s any
		if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
			t.Fatal(err)
		}
		if got := constrainsTypesOnly(s); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.schema, got, tc.want)
		}
	}
	tools, err := loadTools()
	if err != nil {
		t.Fatal(err)
	}
	if !tools["files.create"].schema.typesOnly {
		t.Error("files.create's rows are checked in full, row by row")
	}
}
