package exports

import (
	"mime"
	"testing"
)

func TestContentDisposition(t *testing.T) {
	for _, name := range []string{"report.csv", "Zoë's \"data\".xlsx", "日本語.csv", "a/b\\c\r\n.txt"} {
		v := ContentDisposition(name)
		disp, params, err := mime.ParseMediaType(v)
		if err != nil || disp != "attachment" {
			t.Errorf("%q: %q does not parse: %v", name, v, err)
			continue
		}
		// mime decodes filename* over filename.
		if got := params["filename"]; got != name && name != "a/b\\c\r\n.txt" {
			t.Errorf("%q: got filename %q", name, got)
		}
	}
}
