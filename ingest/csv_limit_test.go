package ingest

import (
	"fmt"
	"strings"
	"testing"

	"datadesk"
)

// TestQuotedFieldBounded: one quoted field of many short lines passed the
// line limit whatever its size (a 200 MB cell was read whole). The limit now
// bounds a record, quoted newlines included, while stray quotes that
// encoding/csv reads as text do not make the rest of a file one record.
func TestQuotedFieldBounded(t *testing.T) {
	t.Parallel()
	var stray strings.Builder
	stray.WriteString("size,name\n")
	for i := range 5000 {
		fmt.Fprintf(&stray, "5\" screen,item %d\n", i)
	}
	var escaped strings.Builder
	escaped.WriteString("a,b\n")
	for i := range 5000 {
		fmt.Fprintf(&escaped, "\"say \"\"hi\"\"\",%d\n", i)
	}
	tests := []struct {
		name, content string
		code          datadesk.Code
	}{
		{"quoted multi-line field past the limit", "id,note\n1,\"" + strings.Repeat("line\n", 20000) + "\"\n", datadesk.Invalid},
		{"one long line past the limit", "id,note\n1," + strings.Repeat("x", 70000) + "\n", datadesk.Invalid},
		{"stray quotes in unquoted fields", stray.String(), ""},
		{"escaped quotes in quoted fields", escaped.String(), ""},
		{"quoted multi-line field within the limit", "id,note\n1,\"" + strings.Repeat("line\n", 1000) + "\"\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			fx.in = New(Config{MaxLine: 64 << 10})
			_, err := fx.ingestBytes("f.csv", []byte(tc.content))
			if got := datadesk.ErrorCode(err); got != tc.code {
				t.Fatalf("got %q (%v), want %q", got, err, tc.code)
			}
			if tc.code != "" && !strings.Contains(err.Error(), "longer than 65536 bytes") {
				t.Errorf("message %v does not name the limit", err)
			}
		})
	}
}

// TestLineBeyondReadLimit: DuckDB's reader takes lines up to 2 MiB of a
// whole file; a longer line within the file's own limit sends the file
// through Go, which loads it, and one past that limit is refused naming
// it, as a shorter limit is.
func TestLineBeyondReadLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	cells := make([]string, 100)
	for i := range cells {
		b.WriteString(fmt.Sprintf("c%d,", i))
		cells[i] = strings.Repeat(string(rune('a'+i%26)), 30000)
	}
	content := strings.TrimSuffix(b.String(), ",") + "\n" + strings.Join(cells, ",") + "\n" + strings.Repeat("1,", 99) + "1\n"
	for _, tc := range []struct {
		maxLine int
		err     string
	}{{16 << 20, ""}, {2<<20 + 1<<19, "longer than 2621440 bytes"}} {
		fx := newFixture(t)
		fx.in = New(Config{MaxLine: tc.maxLine})
		f, err := fx.ingestBytes("wide.csv", []byte(content))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("limit %d: got %v, want %q", tc.maxLine, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("limit %d: %v", tc.maxLine, err)
		}
		tb := f.Tables[0]
		rows := fx.rows(tb.ID)
		if tb.RowCount != 2 || len(tb.Columns) != 100 || len(rows) != 2 || rows[0][99] != cells[99] {
			t.Errorf("limit %d: %d rows, %d columns", tc.maxLine, tb.RowCount, len(tb.Columns))
		}
	}
}
