package web

import "testing"

// TestSameQuery: an address is sent to its own form once, however the
// browser escapes it, and never again.
func TestSameQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"q=a%2Ab&sort=x", "sort=x&q=a*b", true},
		{"q=%7E", "q=~", true},
		{"f.x=1&f.x=2", "f.x=2&f.x=1", false},
		{"q=a&sort=", "q=a", false},
		{"", "", true},
	} {
		if got := sameQuery(tc.a, tc.b); got != tc.same {
			t.Errorf("%q and %q: same %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
