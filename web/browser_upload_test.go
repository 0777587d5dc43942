package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/rbac"
)

// TestBrowserUploadPolicy: the files page's upload was a second path,
// written apart from POST /v1/files, that never showed the policy what the
// file held: a rule denying uploads over 1,000 rows held over the API and
// not from the page. Both now store an upload by one path (storeUpload).
func TestBrowserUploadPolicy(t *testing.T) {
	// Run alone, beside fewer browsers. Its failures under load ("the
	// upload could not be read") were the server closing the body once the
	// progress began: the page's upload now reads and answers in full
	// duplex (UploadForm).
	policy := "p, role:analyst, files.upload, r.attrs.Rows > 1000, deny, allow\n" + rbac.DefaultPolicy
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 4 << 20}, Policy: policy})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, []byte("n\n"+strings.Repeat("7\n", 2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.csv")
	if err := os.WriteFile(small, []byte("n\n"+strings.Repeat("7\n", 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/files"))
	b.signIn("ana")
	upload := func(path string) string {
		b.do(
			chromedp.Navigate(ts.URL+"/files"),
			chromedp.WaitVisible(chromedp.CSS("#upload")),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path}),
			chromedp.Click(chromedp.CSS("#upload-button")),
			chromedp.WaitVisible(chromedp.CSS(".message")),
		)
		return b.text(".message")
	}
	if got := upload(big); !strings.HasPrefix(got, "Not done:") || !strings.Contains(got, "may not use files.upload") {
		t.Errorf("an upload of 2,000 rows from the page: %q, want it denied by the policy", got)
	}
	if got := upload(small); !strings.Contains(got, "Uploaded small.csv") {
		t.Errorf("an upload of 10 rows from the page: %q", got)
	}
	_, list, _ := ts.Do("GET", "/v1/files?session_only=false", ana, nil, "")
	var names []string
	for _, f := range list["files"].([]any) {
		names = append(names, f.(map[string]any)["filename"].(string))
	}
	if len(names) != 1 || names[0] != "small.csv" {
		t.Errorf("files after the uploads: %q, want only small.csv", names)
	}
	// The API refuses the same file by the same rule.
	raw, _ := os.ReadFile(big)
	if code, m := ts.Upload(ana, "big.csv", raw); code != 403 {
		t.Errorf("the API: got %d %v, want 403", code, m)
	}
}

// TestBrowserReadAgain: the table page says how the table was read (its
// header's row, the rows kept out) and reads the stored file again with
// the header in another row, into a new table.
func TestBrowserReadAgain(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	deaths, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "public", "deaths.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	code, m := ts.Upload(ana, "deaths.xlsx", deaths)
	if code != 201 {
		t.Fatalf("upload: %d %v", code, m)
	}
	tid := m["file"].(map[string]any)["table_id"].(string)
	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/tables/" + tid))
	b.signIn("ana")
	b.do(chromedp.WaitVisible(chromedp.CSS("#read")))
	if got := b.text("#read-header"); got != "The header is row 5." {
		t.Errorf("read header: %q", got)
	}
	if got := b.text("#read-skipped tbody tr:first-child"); !strings.Contains(got, "Lots of people") {
		t.Errorf("first row kept out: %q", got)
	}
	if got := b.text("#total"); got != "10" {
		t.Errorf("rows: %q", got)
	}
	b.do(
		chromedp.SetValue(chromedp.CSS("#header-row"), "4"),
		chromedp.Click(chromedp.CSS("#reread-button")),
		chromedp.WaitVisible(chromedp.CSS(".message")),
	)
	if got := b.text(".message"); !strings.Contains(got, "Read deaths.xlsx again with header row 4") {
		t.Errorf("after reading again: %q", got)
	}
	if got := b.text("#read-header"); got != "The header is row 4, as asked." {
		t.Errorf("read header after reading again: %q", got)
	}
	if got := b.text("#total"); got != "11" {
		t.Errorf("rows after reading again: %q", got)
	}
}

// TestUploadHashedAsReceived: an upload's bytes are hashed as they are
// written, not read again while they load; the stored hash and size are
// the bytes' own, from the API and from the files page's form alike
// (both take storeUpload).
func TestUploadHashedAsReceived(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	raw := []byte("id,amount\n" + strings.Repeat("7,1.5\n", 50_000))
	code, m := ts.Upload(token, "h.csv", raw)
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	sum := sha256.Sum256(raw)
	file := m["file"].(map[string]any)
	if file["sha256"] != hex.EncodeToString(sum[:]) || file["size"] != float64(len(raw)) {
		t.Errorf("stored %v bytes hashed %v, want %d and %x", file["size"], file["sha256"], len(raw), sum)
	}
}

// TestBrowserUploadProgress: a 1,000,000-row upload took 7 to 15 s with
// nothing moving on the page. The page now shows the bytes as they are
// sent, then each stage the server reports (reading, then typing and
// storing), then what happened. The browser's uploads are slowed so that
// the bytes are seen going.
func TestBrowserUploadProgress(t *testing.T) {
	// Run alone, beside fewer browsers. Its failures under load ("the
	// upload could not be read") were the server closing the body once the
	// progress began: the page's upload now reads and answers in full
	// duplex (UploadForm).
	ts := apitest.New(t, apitest.Options{MaxUpload: 16 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	csv.WriteString("id,region,amount\n")
	for i := range 60000 {
		fmt.Fprintf(&csv, "%06d,%s,%d.%02d\n", i, []string{"North", "South"}[i%2], i%5000, i%100)
	}
	path := filepath.Join(t.TempDir(), "orders.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.do(chromedp.Navigate(ts.URL + "/files"))
	b.signIn("ana")
	b.do(
		chromedp.Navigate(ts.URL+"/files"),
		chromedp.WaitVisible(chromedp.CSS("#upload")),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
				MatchedNetworkConditions: []*network.Conditions{{DownloadThroughput: -1, UploadThroughput: 1 << 20}}})
			return err
		}),
	)
	// What the status says, each change kept where the next page can read
	// it.
	eval[bool](b, `(() => { sessionStorage.setItem("said", "[]");
		new MutationObserver(records => { const said = JSON.parse(sessionStorage.getItem("said"));
			for (const r of records) for (const n of r.addedNodes) said.push(n.textContent);
			sessionStorage.setItem("said", JSON.stringify(said)); })
		.observe(document.querySelector("#upload-status"), {childList: true}); return true; })()`)
	b.do(
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path}),
		chromedp.Click(chromedp.CSS("#upload-button")),
		chromedp.WaitVisible(chromedp.CSS(".message")),
	)
	if got := b.text(".message"); !strings.Contains(got, "Uploaded orders.csv") {
		t.Fatalf("after the upload: %q", got)
	}
	said := eval[[]string](b, `JSON.parse(sessionStorage.getItem("said"))`)
	sending, stages := 0, []string{}
	for _, s := range said {
		switch {
		case strings.HasPrefix(s, "Sending: "):
			sending++
		case strings.HasSuffix(s, "…") && !strings.HasPrefix(s, "Sending") && !strings.HasPrefix(s, "Sent"):
			stages = append(stages, s)
		}
	}
	if sending < 2 {
		t.Errorf("the bytes sent were said %d times, want them seen going: %q", sending, said)
	}
	if want := []string{"Receiving…", "Reading the file…", "Typing and storing the columns…"}; !slices.Equal(stages, want) {
		t.Errorf("stages said %q, want %q (all said: %q)", stages, want, said)
	}
}
