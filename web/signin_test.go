package web

import "testing"

// TestSafeNext: only a same-site path is where a sign-in goes next;
// browsers drop tabs and newlines and read a backslash as a slash.
func TestSafeNext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ next, want string }{
		{"/tables/t_x?sort=a", "/tables/t_x?sort=a"},
		{"/files", "/files"},
		{"/\t/evil.example/", "/files"},
		{"/\n/evil.example/", "/files"},
		{"//evil.example/", "/files"},
		{"/\\evil.example/", "/files"},
		{"/a/..//evil", "/files"},
		{"https://evil.example/", "/files"},
		{"evil.example", "/files"},
		{"/ /evil", "/files"},
		{"/\u200b/evil", "/files"},
		{"", "/files"},
	} {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}
