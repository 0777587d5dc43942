package rest_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestNaturalOrderOfIdentifiers: whole-number ids kept as identifier text
// (order_id 1 to 1,000,000) sorted 1, 10, 100, 1000 on the page and in
// query_table, and the largest was "999999". Values of digits alone now
// compare as numbers wherever such a column is ordered, and stay text.
func TestNaturalOrderOfIdentifiers(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	var b strings.Builder
	b.WriteString("order_id,amount\n")
	// Past 128 bits (2^128 is 340282366920938463463374607431768211456)
	// digits still order by their number.
	const top, past, long = "0340282366920938463463374607431768211455", "340282366920938463463374607431768211456", "1000000000000000000000000000000000000000000000"
	for _, id := range []string{"10", long, "9", "100", past, "007", "7", "1", top, "2", "20", "B-1", "A-2"} {
		fmt.Fprintf(&b, "%s,1\n", id)
	}
	code, up := ts.Upload(token, "orders.csv", []byte(b.String()))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	file := up["file"].(map[string]any)
	if tb := up["tables"].([]any)[0].(map[string]any)["columns"].([]any)[0].(map[string]any); tb["type"] != "text" || tb["identifier"] != true {
		t.Fatalf("order_id: %v", tb)
	}
	id, tid := file["id"].(string), file["table_id"].(string)
	asc := []string{"1", "2", "007", "7", "9", "10", "20", "100", top, past, long, "A-2", "B-1"}
	desc := []string{"B-1", "A-2", long, past, top, "100", "20", "10", "9", "7", "007", "2", "1"}
	first := func(rows []any, col int) []string {
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprint(r.([]any)[col]))
		}
		return out
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	for dir, want := range map[string][]string{"asc": asc, "desc": desc} {
		_, m, _ := ts.Do("GET", "/v1/tables/"+tid+"/rows?limit=20&sort=order_id&direction="+dir, token, nil, "")
		check("page "+dir, first(m["rows"].([]any), 0), want)
		code, q := ts.Call(token, "files.query_table", map[string]any{"file_id": id, "columns": []any{"order_id"}, "sort_by": "order_id", "direction": dir, "limit": 20})
		if code != http.StatusOK {
			t.Fatalf("query: %d %v", code, q)
		}
		check("query_table rows "+dir, first(q["result"].(map[string]any)["rows"].([]any), 0), want)
		code, g := ts.Call(token, "files.query_table", map[string]any{"file_id": id, "group_by": []any{"order_id"}, "sort_by": "order_id", "direction": dir, "limit": 20})
		if code != http.StatusOK {
			t.Fatalf("grouped query: %d %v", code, g)
		}
		check("query_table groups "+dir, first(g["result"].(map[string]any)["rows"].([]any), 0), want)
		code, a := ts.Call(token, "files.analyze_table", map[string]any{"file_id": id, "group_by": []any{"order_id"}, "measures": []any{map[string]any{"op": "count"}},
			"sort_by": "order_id", "direction": dir, "limit": 20})
		if code != http.StatusOK {
			t.Fatalf("analysis: %d %v", code, a)
		}
		check("analyze_table groups "+dir, first(a["result"].(map[string]any)["rows"].([]any), 0), want)
	}
	code, a := ts.Call(token, "files.analyze_table", map[string]any{"file_id": id, "measures": []any{map[string]any{"op": "min", "column": "order_id"}, map[string]any{"op": "max", "column": "order_id"}}})
	if code != http.StatusOK {
		t.Fatalf("min and max: %d %v", code, a)
	}
	check("min and max", first(a["result"].(map[string]any)["rows"].([]any)[:1], 0), []string{"1"})
	if got := a["result"].(map[string]any)["rows"].([]any)[0].([]any)[1]; got != "B-1" {
		t.Errorf("max %v, want B-1 (text after every number)", got)
	}
	code, a = ts.Call(token, "files.analyze_table", map[string]any{"file_id": id, "filters": []any{map[string]any{"column": "order_id", "op": "not_in", "value": []any{"A-2", "B-1"}}},
		"measures": []any{map[string]any{"op": "min", "column": "order_id"}, map[string]any{"op": "max", "column": "order_id"}}})
	if code != http.StatusOK {
		t.Fatalf("min and max of digits: %d %v", code, a)
	}
	if got := a["result"].(map[string]any)["rows"].([]any)[0].([]any); got[0] != "1" || got[1] != long {
		t.Errorf("min and max of digits %v, want 1 and the longest", got)
	}
	// The page's export in its sort.
	client, _ := ts.PageSignIn(users, "ana")
	resp, err := client.Get(ts.URL + "/tables/" + tid + "/export?format=csv&sort=order_id&dir=asc")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		body.Write(buf[:n])
		if err != nil {
			break
		}
	}
	lines := strings.Split(strings.TrimSpace(body.String()), "\n")
	var ids []string
	for _, l := range lines[1:] {
		ids = append(ids, strings.Split(strings.TrimSpace(l), ",")[0])
	}
	check("export", ids, asc)
}

// TestIdentifierSummary: an identifier column's summary counts and its
// first and last value come from one analysis, under the page's filters
// and search as the other plans take them: each agrees with the rows the
// view keeps, counted here.
func TestIdentifierSummary(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	type row struct{ id, region, note string }
	var rows []row
	var b strings.Builder
	b.WriteString("order_id,region,note\n")
	for i := range 300 {
		r := row{fmt.Sprintf("%04d", (i*37)%1000), []string{"North", "South", "East"}[i%3], []string{"fragile", "standard"}[i%2]}
		if i%25 == 0 {
			r.id = ""
		}
		if i%50 == 7 {
			r.id = fmt.Sprintf("X-%d", i)
		}
		rows = append(rows, r)
		fmt.Fprintf(&b, "%s,%s,%s\n", r.id, r.region, r.note)
	}
	code, up := ts.Upload(token, "orders.csv", []byte(b.String()))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	tid := up["file"].(map[string]any)["table_id"].(string)
	client, _ := ts.PageSignIn(users, "ana")
	for _, tc := range []struct {
		query string
		keep  func(row) bool
	}{
		{"", func(row) bool { return true }},
		{"&o.region=eq&f.region=South", func(r row) bool { return r.region == "South" }},
		{"&q=FRAG", func(r row) bool { return r.note == "fragile" || strings.Contains(strings.ToLower(r.id), "frag") }},
	} {
		var n, nulls int
		distinct := map[string]bool{}
		first, last := "", ""
		for _, r := range rows {
			if !tc.keep(r) {
				continue
			}
			n++
			if r.id == "" {
				nulls++
				continue
			}
			distinct[r.id] = true
			// The numbers are zero-padded, so their text order is their
			// natural one; text ("X-7") comes after every number, so
			// "X-" before the digits sorts it there.
			key := func(id string) string {
				if strings.HasPrefix(id, "X-") {
					return "~" + id
				}
				return id
			}
			if first == "" || key(r.id) < key(first) {
				first = r.id
			}
			if last == "" || key(r.id) > key(last) {
				last = r.id
			}
		}
		resp, err := client.Get(ts.URL + "/tables/" + tid + "?summary=order_id" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		var page strings.Builder
		_, _ = io.Copy(&page, resp.Body)
		resp.Body.Close()
		for id, want := range map[string]string{"facet-order_id-rows": fmt.Sprint(n), "facet-order_id-nulls": fmt.Sprint(nulls),
			"facet-order_id-distinct": fmt.Sprint(len(distinct)), "facet-order_id-min": first, "facet-order_id-max": last} {
			m := regexp.MustCompile(`id="` + id + `"[^>]*>([^<]*)<`).FindStringSubmatch(page.String())
			if m == nil || strings.ReplaceAll(m[1], ",", "") != want {
				t.Errorf("%s with %q: got %v, want %s", id, tc.query, m, want)
			}
		}
	}
}
