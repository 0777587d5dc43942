package web_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"datadesk/api/apitest"
	"datadesk/internal/testenv"
)

// axeTags are the rule sets every page is held to: WCAG 2.0, 2.1 and 2.2
// at levels A and AA (2.2's target-size among them).
var axeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"}

// axeScript is axe-core's script, where make deps installs it: in
// $DATADESK_NODE_MODULES or the checkout's .node folder.
func axeScript(t *testing.T) string {
	t.Helper()
	dirs := []string{os.Getenv("DATADESK_NODE_MODULES"), filepath.Join("..", ".node")}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "node_modules", "axe-core", "axe.min.js")); err == nil {
			return string(b)
		}
	}
	testenv.Missing(t, "no axe-core in .node (make deps installs it with npm)")
	return ""
}

// axeViolation is one rule a page breaks, with a few of the elements.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []string `json:"target"`
		HTML   string   `json:"html"`
	} `json:"nodes"`
}

func (v axeViolation) String() string {
	var nodes []string
	for _, n := range v.Nodes {
		nodes = append(nodes, strings.Join(n.Target, " ")+" "+n.HTML)
	}
	return fmt.Sprintf("%s (%s): %s\n    %s", v.ID, v.Impact, v.Help, strings.Join(nodes, "\n    "))
}

// axe runs axe-core on the page the browser shows, as it is laid out now.
func (b *browserT) axe(script string) []axeViolation {
	b.t.Helper()
	// A page keeps axe-core once loaded, until the next navigation.
	if !eval[bool](b, `typeof axe !== "undefined"`) {
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](script+";true")); err != nil {
			b.t.Fatalf("load axe-core: %v", err)
		}
	}
	tags, _ := json.Marshal(axeTags)
	run := `axe.run(document, {runOnly: {type: "tag", values: ` + string(tags) + `}}).then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => ({target: n.target, html: n.html.slice(0, 160)}))}))))`
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](run, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("axe: %v", err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		b.t.Fatalf("axe's answer: %v", err)
	}
	return vs
}

// TestAxeEveryPage runs axe-core (WCAG 2.2 AA rules included) on every
// page an analyst and an approver reach, at a desktop's width and a
// phone's: each has no violation.
func TestAxeEveryPage(t *testing.T) {
	t.Parallel()
	script := axeScript(t)
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
	var in strings.Builder
	in.WriteString("id,region,amount,day,note\n")
	for i := range 120 {
		fmt.Fprintf(&in, "%05d,%s,%d.%02d,2024-%02d-%02d,n%d\n", i, []string{"North", "south", "East"}[i%3], i*3%97, i%100, 1+i%12, 1+i%28, i)
	}
	_, m := ts.Upload(ana, "orders.csv", []byte(in.String()))
	tid := m["file"].(map[string]any)["table_id"].(string)
	code, m := ts.Call(ana, "files.query_table", map[string]any{"file_id": tid, "show": true, "group_by": []any{"region"},
		"aggregates": []any{map[string]any{"op": "sum", "column": "amount", "name": "total"}}})
	if code != 200 {
		t.Fatalf("grouped view: %d %v", code, m)
	}
	vid := m["result"].(map[string]any)["view"].(map[string]any)["table_id"].(string)
	code, held := ts.Call(vic, "files.create", map[string]any{"filename": "wish.xlsx", "columns": []any{"a", "b"}, "rows": []any{[]any{1, "x"}, []any{2, "y"}}})
	if code != 202 {
		t.Fatalf("pending call: %d %v", code, held)
	}
	approvalID := held["approval"].(map[string]any)["id"].(string)

	b := newBrowser(t)
	pages := []struct{ name, path, who string }{
		{"sign-in", "/signin", ""},
		{"files", "/files", "ana"},
		{"table", "/tables/" + tid, "ana"},
		{"table filtered and summarised", "/tables/" + tid + "?o.amount=between&f.amount=10&t.amount=50&summary=region", "ana"},
		{"table matching nothing", "/tables/" + tid + "?o.amount=gt&f.amount=100000", "ana"},
		{"table with a refused filter", "/tables/" + tid + "?o.amount=gt&f.amount=lots", "ana"},
		{"grouped view with its chart", "/tables/" + vid, "ana"},
		{"table grouped on the page", "/tables/" + tid + "?o.amount=gte&f.amount=10&g=day&gb=month&gm=sum&gc=amount", "ana"},
		{"table with two summaries and columns chosen", "/tables/" + tid + "?summary=region&summary=day&col=amount&col=id&col=region&hide=note", "ana"},
		{"table with an address it cannot read", "/tables/" + tid + "?colour=red", "ana"},
		{"not found", "/tables/t_nope", "ana"},
		{"approvals", "/approvals", "root"},
		{"an approval's detail", "/approvals/" + approvalID, "root"},
	}
	// Each page is loaded once and checked at both widths: the layout
	// follows the window's width without a reload.
	signedIn := ""
	for _, p := range pages {
		if p.who != signedIn {
			if signedIn != "" {
				b.do(chromedp.EmulateViewport(1400, 900), chromedp.Navigate(ts.URL+"/files"),
					chromedp.Click(chromedp.CSS(".signout button")), chromedp.WaitVisible(chromedp.CSS("#name")))
			}
			if p.who != "" {
				b.do(chromedp.EmulateViewport(1400, 900), chromedp.Navigate(ts.URL+"/files"))
				b.signIn(p.who)
			}
			signedIn = p.who
		}
		b.do(chromedp.EmulateViewport(1400, 900), chromedp.Navigate(ts.URL+p.path), chromedp.WaitReady(chromedp.CSS("main")))
		for _, width := range []int64{1400, 400} {
			b.do(chromedp.EmulateViewport(width, 900))
			for _, v := range b.axe(script) {
				t.Errorf("%s at %d px: %s", p.name, width, v)
			}
			// The page itself never scrolls sideways: a wide table scrolls
			// inside its own frame.
			if wide := eval[float64](b, `document.documentElement.scrollWidth - window.innerWidth`); wide > 0 {
				t.Errorf("%s at %d px: the page is %.0f px wider than the window", p.name, width, wide)
			}
		}
	}
}
