package mcpserver

import (
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
