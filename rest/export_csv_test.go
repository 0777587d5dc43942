package rest_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"
	"datadesk/exports"
	"datadesk/toolcall"
)

// TestCSVExportByDuckDB: a whole table's CSV written by DuckDB's writer
// holds every value as the exports' own writer writes it: text that would
// run as a formula neutralised and numbers that look like formulas not,
// decimals with their scale, timestamps in ISO form with their fraction,
// quotes, commas and line breaks quoted, empty cells empty.
func TestCSVExportByDuckDB(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	var in bytes.Buffer
	in.WriteString("id,note,amount,day,at,ok,qty\n")
	notes := []string{"=SUM(A1)", "+1", "-5", "-1.5e3", "@x", "plain", "a,b", `say "hi"`, "two\nlines", " lead", "", "ünï", "\ttab", "+x"}
	for i, n := range notes {
		q := n
		if n != "" {
			q = `"` + strings.ReplaceAll(n, `"`, `""`) + `"`
		}
		fmt.Fprintf(&in, "%05d,%s,%d.%02d,2024-01-%02d,2024-01-%02d 10:00:%02d.%06d,%v,%d\n", i, q, i*3, i, 1+i, 1+i, i, (i*125000)%1000000, i%2 == 0, i-5)
	}
	in.WriteString("99999,,,,,,\n")
	code, up := ts.Upload(token, "shapes.csv", in.Bytes())
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	tableID := up["file"].(map[string]any)["table_id"].(string)
	ctx := context.Background()
	u, err := users.ByName("ana")
	if err != nil {
		t.Fatal(err)
	}
	store, release, err := ts.Server.Engine().Acquire(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	tbl, err := store.Table(ctx, tableID)
	if err != nil {
		t.Fatal(err)
	}
	write := func(fast bool) [][]string {
		src, err := toolcall.ExportSource(ctx, store, tbl)
		if err != nil {
			t.Fatal(err)
		}
		used := false
		if fast {
			src.CSV = func(w io.Writer) (bool, error) {
				ok, err := store.CopyCSV(ctx, tbl.ID, w)
				used = ok
				return ok, err
			}
		}
		var out bytes.Buffer
		if _, err := exports.WriteCSV(&out, src, exports.Options{}); err != nil {
			t.Fatal(err)
		}
		if fast && !used {
			t.Fatal("DuckDB's writer was not used")
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	ours, duck := write(false), write(true)
	if len(ours) != len(duck) {
		t.Fatalf("%d records, DuckDB's writer %d", len(ours), len(duck))
	}
	for i := range ours {
		if fmt.Sprintf("%q", ours[i]) != fmt.Sprintf("%q", duck[i]) {
			t.Errorf("record %d:\n exports %q\n duckdb  %q", i, ours[i], duck[i])
		}
	}
	t.Logf("types %v", func() (out []string) {
		for _, c := range tbl.Columns {
			out = append(out, c.Type)
		}
		return
	}())
}
