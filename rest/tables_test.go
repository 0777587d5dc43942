package rest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"datadesk"
	"datadesk/toolcall"
)

// TestReadDeclaredTable reads declared tables' bodies without a server:
// the rows stay in the body as a list, the other keys are decoded, and a
// body of the wrong shape is refused naming the key and the shape.
func TestReadDeclaredTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body, want string
		rows       int
	}{
		{`{"provider": "crm", "title": "visits", "columns": ["a", "b"], "rows": [[1, 2], [3, 4], [5, 6]]}`, "", 3},
		{`{"provider": "crm", "rows": [], "colour": 1}`, `unknown key "colour" in the body`, 0},
		{`{"provider": 5, "rows": []}`, "provider must be text, not a number", 0},
		{`[]`, "the body must be an object", 0},
		{`{"provider": "crm", "rows": [[1]]} x`, "the body must be one JSON object", 0},
		{`{"provider": "crm", "rows": [[1],}`, "the body is not valid JSON", 0},
	} {
		in, rows, err := readDeclaredTable(io.NewSectionReader(strings.NewReader(tc.body), 0, int64(len(tc.body))))
		if tc.want != "" {
			if datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want invalid saying %q", tc.body, err, tc.want)
			}
			continue
		}
		if err != nil || in.Provider != "crm" || in.Title != "visits" || rows == nil || rows.Len() != tc.rows {
			t.Errorf("%s: %+v %v %v", tc.body, in, rows, err)
		}
	}
}

// TestOffloadPreviewBounds: the preview of an offloaded table keeps at
// most previewRows rows and previewChars characters, and counts them all.
func TestOffloadPreviewBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cell  string
		total int
	}{
		{"short rows", "x", 100},
		{"long rows", strings.Repeat("é", 900), 100},
		{"few rows", "x", 3},
	} {
		rows := make([]any, tc.total)
		for i := range rows {
			rows[i] = []any{fmt.Sprint(i), tc.cell}
		}
		b, _ := json.Marshal(rows)
		dec := toolcall.NewDecoder(strings.NewReader(string(b)))
		list, err := toolcall.ReadRows(dec, strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		p := offloadPreview([]string{"id", "note"}, list)
		shown := p["rows"].([]any)
		out, _ := json.Marshal(shown)
		if len(shown) > previewRows || len([]rune(string(out))) > previewChars || p["rows_total"] != tc.total ||
			p["rows_shown"] != len(shown) || len(shown) == 0 {
			t.Errorf("%s: %d rows shown of %v, %d characters", tc.name, len(shown), p["rows_total"], len([]rune(string(out))))
		}
	}
}
