package exports

import (
	"strings"
	"testing"
)

// TestSheetName: the names Excel accepts for a sheet. A sheet titled
// History (reserved by Excel for change tracking) was written, and Excel
// reports such a workbook as damaged.
func TestSheetName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Sales", "Sales"},
		{"a/b:c?", "a_b_c_"},
		{"'quoted'", "quoted"},
		{"", "Data"},
		{"   ", "Data"},
		{"History", "History (data)"},
		{"history", "history (data)"},
		{"HISTORY", "HISTORY (data)"},
		{"History 2024", "History 2024"},
		{strings.Repeat("x", 40), strings.Repeat("x", 31)},
	} {
		if got := sheetName(tc.in); got != tc.want {
			t.Errorf("sheetName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
