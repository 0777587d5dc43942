package toolcall

import (
	"fmt"
	"strings"
	"testing"
)

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
