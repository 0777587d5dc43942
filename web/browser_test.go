package web_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/xuri/excelize/v2"

	"datadesk/api/apitest"
	"datadesk/internal/testenv"
)

// chromium finds Debian's Chromium, which `make test` installs.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("DATADESK_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	testenv.Missing(t, "no Chromium: `make test` installs Debian's chromium; or set DATADESK_CHROMIUM")
	return ""
}

// browser is a headless Chromium driven through chromedp. On failure the
// test leaves a screenshot of the last page in the folder it names.
type browserT struct {
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T) *browserT {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	// The first run starts the browser; a deadline may only bound what
	// comes after it, or it would stop the browser itself.
	if err := chromedp.Do(ctx); err != nil {
		cancelB()
		cancelA()
		t.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	b := &browserT{t: t, ctx: ctx}
	t.Cleanup(func() {
		if t.Failed() {
			b.keepScreenshots()
		}
		cancelT()
		cancelB()
		cancelA()
	})
	return b
}

// screenshotWidths are the window widths a failed test is pictured at: the
// narrowest the page is laid out for, and a common laptop.
var screenshotWidths = []int64{1024, 1440}

// keepScreenshots saves the last page at each width, as artifacts of the
// failed test, in $DATADESK_ARTIFACTS or the system's temp folder, and
// names the files in the test's log.
func (b *browserT) keepScreenshots() {
	dir := os.Getenv("DATADESK_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "datadesk-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Logf("no screenshots: %v", err)
		return
	}
	for _, w := range screenshotWidths {
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			b.t.Logf("no screenshot at %d px: %v", w, err)
			continue
		}
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			b.t.Logf("no screenshot at %d px: %v", w, err)
			continue
		}
		p := filepath.Join(dir, fmt.Sprintf("%s-%dpx.png", strings.ReplaceAll(b.t.Name(), "/", "_"), w))
		if os.WriteFile(p, png, 0o644) == nil {
			b.t.Logf("screenshot of the failure at %d px: %s", w, p)
		}
	}
}

// do runs steps, failing the test on the first error.
func (b *browserT) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatal(err)
	}
}

// text returns the text of the first element sel matches.
func (b *browserT) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// waitText waits until the first element sel matches has the text want,
// for checks right after a navigation, and returns what it last saw.
func (b *browserT) waitText(sel, want string) string {
	b.t.Helper()
	var got string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
		if got = strings.TrimSpace(s); err == nil && got == want {
			break
		}
	}
	return got
}

func (b *browserT) attr(sel, name string) string {
	b.t.Helper()
	r, err := chromedp.Run(b.ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil {
		b.t.Fatalf("%s of %s: %v", name, sel, err)
	}
	return r.Value
}

func (b *browserT) signIn(name string) {
	b.t.Helper()
	b.do(
		chromedp.WaitVisible(chromedp.CSS("#name")),
		chromedp.SendKeys(chromedp.CSS("#name"), name),
		chromedp.SendKeys(chromedp.CSS("#password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("header nav")),
	)
}

// TestBrowser drives the page in a real browser: sign in, open a table,
// sort, filter, page to the end, export and check the XLSX, and approve a
// pending call.
func TestBrowser(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	vic := apitest.AddUser(t, users, "vic", "viewer")
	apitest.AddUser(t, users, "root", "admin")
	for _, u := range []string{"ana", "root"} {
		if err := users.SetPassword(u, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
	}
	var csv strings.Builder
	csv.WriteString("id,region,amount,note\n")
	regions := []string{"North", "south", "East"}
	top := ""
	topCents := -1
	for i := 1; i <= 120; i++ {
		if c := (i*3%97)*100 + i%100; c > topCents {
			topCents, top = c, fmt.Sprintf("%d.%02d", i*3%97, i%100)
		}
		note := fmt.Sprintf("n%d", i)
		if i%10 == 0 {
			note = ""
		}
		fmt.Fprintf(&csv, "%05d,%s,%d.%02d,%s\n", i, regions[i%3], i*3%97, i%100, note)
	}
	_, m := ts.Upload(ana, "orders.csv", []byte(csv.String()))
	tid := m["file"].(map[string]any)["table_id"].(string)
	code, am := ts.Call(vic, "files.create", map[string]any{"filename": "wish.txt", "content": "please"})
	if code != 202 {
		t.Fatalf("pending call: %d %v", code, am)
	}
	approvalID := am["approval"].(map[string]any)["id"].(string)

	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/tables/" + tid))
	b.signIn("ana")
	b.do(chromedp.WaitVisible(chromedp.CSS("#total")))
	if got := b.text("#total"); got != "120" {
		t.Errorf("total %q", got)
	}
	if got := b.text(".grid tbody tr:first-child td:first-child"); got != "00001" {
		t.Errorf("first id %q: identifiers must show as text", got)
	}
	if got := b.attr(".grid tbody tr:first-child td:nth-child(3)", "class"); got != "num" {
		t.Errorf("amount cell class %q, want num (right-aligned)", got)
	}
	if got := b.attr(".grid tbody tr:nth-child(10) td:nth-child(4)", "class"); got != "null" {
		t.Errorf("row 10's empty note has class %q, want null", got)
	}

	// Sort by amount, descending (two clicks).
	b.do(
		chromedp.Click(chromedp.CSS("#sort-amount")),
		chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="ascending"]`)),
		chromedp.Click(chromedp.CSS("#sort-amount")),
		chromedp.WaitVisible(chromedp.CSS(`th[aria-sort="descending"]`)),
	)
	if got := b.text(".grid tbody tr:first-child td:nth-child(3)"); got != top {
		t.Errorf("top amount after sorting: %q, want %s", got, top)
	}
	// Filter: region eq NORTH, case-insensitively.
	b.do(
		chromedp.SetValue(chromedp.CSS("#o-region"), "eq"),
		chromedp.SendKeys(chromedp.CSS("#f-region"), "NORTH"),
		chromedp.Click(chromedp.CSS("#apply")),
		chromedp.WaitVisible(chromedp.CSS(`#f-region-0[value="NORTH"]`)),
	)
	if got := b.waitText("#total", "40"); got != "40" {
		t.Errorf("rows with region north: %q", got)
	}
	// Page to the end.
	b.do(
		chromedp.Navigate(ts.URL+"/tables/"+tid),
		chromedp.Click(chromedp.CSS("#last")),
	)
	if got := b.waitText("#range", "101–120"); got != "101–120" {
		t.Errorf("last page range %q", got)
	}
	if got := b.text(".grid tbody tr:last-child td:first-child"); got != "00120" {
		t.Errorf("last id %q", got)
	}

	// Export: the browser downloads the XLSX, and its cells are the data.
	x, err := excelize.OpenReader(bytes.NewReader(b.download("#export-xlsx")))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := x.GetRows(x.GetSheetList()[0])
	if len(rows) != 121 || rows[1][0] != "00001" || rows[120][0] != "00120" {
		t.Errorf("downloaded XLSX: %d rows, %q", len(rows), rows[1])
	}
	if typ, _ := x.GetCellType(x.GetSheetList()[0], "A2"); typ != excelize.CellTypeInlineString {
		t.Errorf("id cell type %v, want text", typ)
	}

	// Sign out, sign in as the approver, approve the pending call.
	b.do(
		chromedp.Navigate(ts.URL+"/files"),
		chromedp.Click(chromedp.CSS(".signout button")),
	)
	b.signIn("root")
	b.do(
		chromedp.Navigate(ts.URL+"/approvals"),
		chromedp.Click(chromedp.CSS("#approval-"+approvalID+" button.approve")),
		chromedp.WaitVisible(chromedp.CSS(".message")),
	)
	if got := b.waitText("#approval-"+approvalID+" .status", "done"); got != "done" {
		t.Errorf("approval status %q", got)
	}
	_, m, _ = ts.Do("GET", "/v1/files", vic, nil, "")
	if n := len(m["files"].([]any)); n != 1 {
		t.Errorf("the approved call made %d files for vic", n)
	}
}

// TestPageMessages: a missing table and an ended session get clear pages.
func TestPageMessages(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	users.SetPassword("ana", "correct horse battery")
	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/files"))
	b.signIn("ana")
	b.do(chromedp.Navigate(ts.URL + "/tables/t_aaaaaaaaaaaaaaaaaaaaaaaaaa"))
	if got := b.text("h1"); got != "Not found" {
		t.Errorf("missing table: %q", got)
	}
	b.do(chromedp.Navigate(ts.URL+"/files"), chromedp.Click(chromedp.CSS(".signout button")), chromedp.WaitVisible(chromedp.CSS(".message")))
	if got := b.text(".message"); !strings.Contains(got, "signed out") {
		t.Errorf("sign-out message %q", got)
	}
	// Back to a page after signing out: the sign-in page, not an error.
	b.do(chromedp.Navigate(ts.URL+"/files"), chromedp.WaitVisible(chromedp.CSS("#name")))
}
