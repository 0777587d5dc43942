package api_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"

	"github.com/xuri/excelize/v2"
)

// TestGroupExportOnePass: GET /tables/{id}/group.xlsx?g=id&gm=median&gc=amount
// on a 400,000-row table ran up to 200 analyses one after another, 50
// groups each, each under its own limit and none over the whole: 193 s
// for a 141 KB file. The export now asks for its groups in one pass, and
// every page and export runs within the query timeout as a whole.
func TestGroupExportOnePass(t *testing.T) {
	// Not parallel: it measures the process's memory, which other tests would add to.
	const timeout = 3 * time.Second
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 16 << 20, QueryTimeout: timeout}})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	var csv strings.Builder
	csv.WriteString("id,amount\n")
	for i := range 100_000 {
		fmt.Fprintf(&csv, "k%d,%d.%02d\n", i, i%997, i%100)
	}
	code, m := ts.Upload(ana, "big.csv", []byte(csv.String()))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	table := m["file"].(map[string]any)["table_id"].(string)
	client, _ := ts.PageSignIn(users, "ana")
	// The most groups an export holds (catalog.MaxAnalysisExport), each a
	// median: within the timeout, and little memory.
	start := time.Now()
	var resp *http.Response
	var body []byte
	rss, _ := apitest.MemoryPeaks(t, func() {
		var err error
		if resp, err = client.Get(ts.URL + "/tables/" + table + "/group.xlsx?g=id&gm=median&gc=amount"); err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	})
	took := time.Since(start)
	t.Logf("the grouping's XLSX: %d, %d KiB in %v; the process grew %d MiB", resp.StatusCode, len(body)>>10, took, rss>>20)
	if took > timeout {
		t.Errorf("the export took %v, past the query timeout of %v", took, timeout)
	}
	if rss > 256<<20 {
		t.Errorf("the export grew the process %d MiB, want under 256 MiB", rss>>20)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d %.200s", resp.StatusCode, body)
	}
	f, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10_001 || rows[1][1] != "996.99" && rows[1][1] != "996.99000000000001" {
		t.Errorf("%d rows, the first group %v; want the 10,000 largest medians under a header", len(rows), rows[min(1, len(rows)-1)])
	}

	// Past the timeout, a page and an export end as a whole, answering
	// timeout however many statements they had left.
	ts.Server.Cfg().QueryTimeout = time.Millisecond
	for _, path := range []string{"/tables/" + table + "?o.amount=gt&f.amount=5&summary=amount", "/tables/" + table + "/export?format=csv",
		"/tables/" + table + "/group.xlsx?g=id&gm=median&gc=amount"} {
		start := time.Now()
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != http.StatusGatewayTimeout || took > time.Second {
			t.Errorf("%s past the query timeout: %d after %v, want 504 at once", path, resp.StatusCode, took)
		}
	}
}
