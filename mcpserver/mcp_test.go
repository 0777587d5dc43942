package mcpserver

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestSetRowsAside: each tools/call with a list of rows in its arguments,
// alone or in a batch, is given with a reference in their place, and the
// body with the rows put back is the body that came; anything else is
// given as it came.
func TestSetRowsAside(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		aside int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files_create","arguments":{"filename":"a.csv","rows":[[1,"]"],[2,"x\""]],"columns":["a","b"]}}}`, 1},
		{` { "params" : { "arguments" : { "rows" : [ ] } , "name" : "files_create" } , "id" : "x" , "method" : "tools/call" , "jsonrpc" : "2.0" } `, 1},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"rows":[[1]]}}}, {"jsonrpc":"2.0","id":2,"method":"ping"},` +
			`{"method":"tools/call","params":{"arguments":{"rows":[[2],[3]]}}}]`, 2},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files_create","arguments":{"note":{"rows":[[1]]},"rows":"text"}}}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"arguments":{"rows":[[1]]}}}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"rows":[[1]]}}} {}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"rows":[[1],}}}`, 0},
		{`[{"method":"tools/call","params":{"arguments":{"rows":[[1]]}}}, 5]`, 0},
	} {
		body := io.NewSectionReader(strings.NewReader(tc.in), 0, int64(len(tc.in)))
		msg, aside := setRowsAside(body)
		got, err := io.ReadAll(msg)
		if err != nil {
			t.Fatal(err)
		}
		if len(aside) != tc.aside {
			t.Errorf("%s: %d set aside, want %d", tc.in, len(aside), tc.aside)
			continue
		}
		back := string(got)
		for ref, rows := range aside {
			b, _ := rows.MarshalJSON()
			back = strings.Replace(back, `"`+ref+`"`, string(b), 1)
		}
		if back != tc.in || tc.aside > 0 && strings.Contains(string(got), "[[") {
			t.Errorf("%s: given as %s", tc.in, got)
		}
	}
}

// TestAnswerTextWithinBudget: rows past the text's budget are named, with
// the offset of the first left out; cells are cut.
func TestAnswerTextWithinBudget(t *testing.T) {
	t.Parallel()
	rows := make([]any, 40)
	for i := range rows {
		rows[i] = []any{fmt.Sprintf("r%d", i), strings.Repeat("x", 100)}
	}
	r := map[string]any{"matched_row_count": 1, "source_row_count": 1, "columns": []any{"id", "note"}, "rows": rows,
		"offset": 20, "has_more": true, "notes": []any{"a note"}, "hint": "a hint"}
	text := answerText(r, 1000)
	if len(text) > 1000 {
		t.Errorf("%d bytes past the budget of 1000", len(text))
	}
	for _, want := range []string{"1 of 1 row match.", "\nid | note\nr0 | xxx", "…", "of this page not shown here", "ask again with offset 3", "\nHint: a hint", "\nNote: a note"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, strings.Repeat("x", maxCell)) {
		t.Errorf("a cell is not cut: %s", text)
	}
}
