package typing

import "testing"

// TestMayBeWrittenRulesOutOnlyText checks the cheap test before the
// written-form pattern over every short string of the characters that
// matter to both: it may let through what the pattern refuses, never the
// reverse.
func TestMayBeWrittenRulesOutOnlyText(t *testing.T) {
	const alphabet = "0-eE/:1 .,%$(+)"
	var walk func(v string)
	walk = func(v string) {
		if v != "" && v[0] != ' ' && writtenRE.MatchString(v) && !mayBeWritten(v) {
			t.Errorf("%q is a written form, but mayBeWritten rules it out", v)
		}
		if len(v) == 5 {
			return
		}
		for i := range len(alphabet) {
			walk(v + alphabet[i:i+1])
		}
	}
	walk("")
	for _, v := range []string{"3.6e-05", "1E-3", "2024-01-05", "12:30", "3/4/2025", "1-2", "5 -3"} {
		if got, want := mayBeWritten(v), writtenRE.MatchString(v); want && !got {
			t.Errorf("%q: mayBeWritten %v, pattern %v", v, got, want)
		}
	}
}
