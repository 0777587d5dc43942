package api

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserApprovalDetail: three pending calls looked alike (tool,
// caller, size, rule). An approver now opens one and reads what it will
// do: the caller, the rule that held it, its arguments with a file named
// and rows counted with the first of them; and an Approve clicked on a
// page gone stale says the call was already rejected, and by whom.
func TestBrowserApprovalDetail(t *testing.T) {
	ts, users := newServer(t, 4<<20)
	ana := addUser(t, users, "ana", "analyst")
	vic := addUser(t, users, "vic", "viewer")
	root := addUser(t, users, "root", "admin")
	for _, u := range []string{"root"} {
		if err := users.SetPassword(u, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
	}
	_ = ana
	code, held := ts.call(vic, "files.create", map[string]any{"filename": "targets.xlsx", "columns": []any{"region", "target"},
		"rows": []any{[]any{"North", 100}, []any{"South", 200}, []any{"East", 300}}})
	if code != 202 {
		t.Fatalf("pending call: %d %v", code, held)
	}
	id := held["approval"].(map[string]any)["id"].(string)

	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.url + "/approvals"))
	b.signIn("root")
	b.do(chromedp.Navigate(ts.url+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#approval-"+id+" a.approval-link")))
	if got := b.attr("#approval-"+id+" .approve", "aria-label"); got != "Approve files.create by vic ("+id+")" {
		t.Errorf("the Approve button's name: %q", got)
	}
	b.do(chromedp.Click(chromedp.CSS("#approval-"+id+" a.approval-link")), chromedp.WaitVisible(chromedp.CSS("#approval-args")))
	args := b.text("#approval-args")
	for _, want := range []string{"filename", "targets.xlsx", "3 rows", "North", "100", "2 columns"} {
		if !strings.Contains(args, want) {
			t.Errorf("the arguments lack %q: %s", want, args)
		}
	}
	if got := b.text("#approval-caller"); got != "vic" {
		t.Errorf("caller %q", got)
	}
	if got := b.text("#approval-reason"); got == "" {
		t.Errorf("no rule shown")
	}
	// The list page, then a rejection elsewhere: its Approve is stale.
	b.do(chromedp.Navigate(ts.url+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#approval-"+id+" .approve")))
	if code, m, _ := ts.do("POST", "/v1/approvals/"+id+"/reject", root, nil, ""); code != 200 {
		t.Fatalf("reject: %d %v", code, m)
	}
	b.do(chromedp.Click(chromedp.CSS("#approval-"+id+" .approve")), chromedp.WaitNotPresent(chromedp.CSS("#approval-"+id)), chromedp.WaitVisible(chromedp.CSS("main")))
	if got := b.text("main"); !strings.Contains(got, "already rejected by root") {
		t.Errorf("a stale Approve says: %q", got)
	}
}
