package rbac

import "testing"

// TestReasonWords: an approval's reason reads as the rule in words, and
// one that cannot be read is given as it is.
func TestReasonWords(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{"policy rule: role:analyst, files.create, r.attrs.Rows > 50000, approve, allow",
			"The policy holds files.create calls by analysts for a person's approval when it has more than 50,000 rows."},
		{"policy rule: role:viewer, files.query_table, r.attrs.Show && r.attrs.Derived, approve, allow",
			"The policy holds files.query_table calls by viewers for a person's approval when it stores its answer as a table and its rows are filtered or grouped."},
		{"policy rule: role:viewer, files.create, r.attrs.Format == 'zip', approve, allow",
			"The policy holds files.create calls by viewers for a person's approval when its format is zip."},
		{"policy rule: role:viewer, files.create, true, approve, allow",
			"The policy holds files.create calls by viewers for a person's approval, every one."},
		{"files.delete always needs approval (tool metadata); policy rule: role:analyst, files.delete, true, allow, allow",
			"files.delete always waits for a person's approval: the tool is set so. The policy lets files.delete calls by analysts run, every one."},
		{"acting account bot: policy rule: role:platform, files.create, r.attrs.ActingFor && r.attrs.Bytes >= 1000, approve, allow",
			"For the account acting for the user (bot): The policy holds files.create calls by platforms for a person's approval when an account acts for the user and it moves at least 1,000 bytes."},
		{"policy rule: role:x, files.read, r.attrs.Rows > r.attrs.Limit, approve, allow",
			"The policy holds files.read calls by xs for a person's approval when r.attrs.Rows > r.attrs.Limit."},
		{"the call's user no longer exists", "the call's user no longer exists"},
	} {
		if got := ReasonWords(tc.reason); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.reason, got, tc.want)
		}
	}
}
