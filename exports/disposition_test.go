package exports

import (
	"mime"
	"strings"
	"testing"
)

// TestContentDisposition: a '"' in a name gave two filename parameters;
// now there is exactly one filename and at most one filename*, and the
// exact name comes back where it is safe.
func TestContentDisposition(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"report.csv", "report.csv"},
		{`Zoë's "data".xlsx`, `Zoë's "data".xlsx`},
		{`a"b.csv`, `a"b.csv`},
		{"日本語.csv", "日本語.csv"},
		{"100%.csv", "100%.csv"},
		{"a/b\\c\r\n.txt", "a/b\\c.txt"},
		{"evil\u202egpj.exe", "evilgpj.exe"},
		{"nul\x00.txt", "nul.txt"},
		{"", "download"},
	} {
		v := ContentDisposition(tc.name)
		if n := strings.Count(v, "filename="); n != 1 {
			t.Errorf("%q: %d filename parameters in %q", tc.name, n, v)
		}
		if n := strings.Count(v, "filename*="); n > 1 {
			t.Errorf("%q: %d filename* parameters in %q", tc.name, n, v)
		}
		disp, params, err := mime.ParseMediaType(v)
		if err != nil || disp != "attachment" {
			t.Errorf("%q: %q does not parse: %v", tc.name, v, err)
			continue
		}
		// mime decodes filename* over filename.
		if got := params["filename"]; got != tc.want {
			t.Errorf("%q: got filename %q, want %q (%s)", tc.name, got, tc.want, v)
		}
	}
}
