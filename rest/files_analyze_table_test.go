package rest_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/rbac"
)

// dailyCSV is a small table of daily counts by country, with a county
// code padded with zeros and a blank death count.
const dailyCSV = `country,day,cases,deaths,fips
Germany,2020-01-31,1,0,06001
Germany,2020-02-15,4,0,06037
Germany,2020-03-01,10,1,10600
France,2020-01-31,2,0,20065
France,2020-02-10,6,1,06075
France,2020-03-02,20,3,30061
Spain,2020-02-20,3,  ,41006
Spain,2020-03-03,9,2,40006
`

// countriesCSV is a lookup table keyed by country.
const countriesCSV = `name,continent,population
Germany,Europe,83000000
France,Europe,67000000
Spain,Europe,47000000
Japan,Asia,125000000
`

// analysisQuestion is an analyst's question, its arguments and the
// answer's fields that must hold.
type analysisQuestion struct {
	name string
	args map[string]any
	want map[string]any
}

func f(column, op string, value any) map[string]any {
	return map[string]any{"column": column, "op": op, "value": value}
}

func m(op, column string) map[string]any {
	if column == "" {
		return map[string]any{"op": op}
	}
	return map[string]any{"op": op, "column": column}
}

// analysisQuestions asks one question per capability of
// files.analyze_table, with the answer worked out by hand.
func analysisQuestions(daily, countries string) []analysisQuestion {
	month := map[string]any{"column": "day", "bucket": "month"}
	return []analysisQuestion{
		{"cases by month", map[string]any{"file_id": daily, "group_by": []any{month}, "measures": []any{m("sum", "cases")}},
			map[string]any{"columns": []any{"day_month", "sum_cases"}, "rows": []any{[]any{"2020-01-01", 3}, []any{"2020-02-01", 13}, []any{"2020-03-01", 39}}, "group_count": 3}},
		{"cases by year and quarter", map[string]any{"file_id": daily, "group_by": []any{map[string]any{"column": "day", "bucket": "quarter"}}, "measures": []any{m("count", "")}},
			map[string]any{"rows": []any{[]any{"2020-01-01", 8}}}},
		{"distinct countries", map[string]any{"file_id": daily, "measures": []any{m("count_distinct", "country")}},
			map[string]any{"rows": []any{[]any{3}}}},
		{"first and last day", map[string]any{"file_id": daily, "measures": []any{m("min", "day"), m("max", "day"), m("max", "country")}},
			map[string]any{"rows": []any{[]any{"2020-01-31", "2020-03-03", "Spain"}}}},
		{"median and 90th percentile", map[string]any{"file_id": daily, "measures": []any{m("median", "cases"),
			map[string]any{"op": "percentile", "column": "cases", "p": 0.9, "name": "p90"}}},
			// DuckDB's and pandas' linear interpolation: 10 + (6.3-6)*(20-10).
			map[string]any{"rows": []any{[]any{5, 12.999999999999998}}}},
		{"standard deviation", map[string]any{"file_id": daily, "filters": []any{f("country", "eq", "Spain")}, "measures": []any{m("stddev", "cases")}},
			map[string]any{"rows": []any{[]any{4.242640687119285}}}},
		{"share of cases", map[string]any{"file_id": daily, "group_by": []any{"country"}, "measures": []any{m("share", "cases")}, "sort_by": "country"},
			map[string]any{"rows": []any{[]any{"France", 28.0 / 55}, []any{"Germany", 15.0 / 55}, []any{"Spain", 12.0 / 55}}}},
		{"deaths per case", map[string]any{"file_id": daily, "group_by": []any{"country"}, "sort_by": "country",
			"measures": []any{m("sum", "deaths"), m("sum", "cases"), map[string]any{"name": "rate", "expr": "sum_deaths / sum_cases"}}},
			map[string]any{"rows": []any{[]any{"France", 4, 28, 4.0 / 28}, []any{"Germany", 1, 15, 1.0 / 15}, []any{"Spain", 2, 12, 2.0 / 12}}}},
		{"countries past 14 cases", map[string]any{"file_id": daily, "group_by": []any{"country"}, "measures": []any{m("sum", "cases")},
			"having": []any{map[string]any{"measure": "sum_cases", "op": "gt", "value": 14}}, "sort_by": "country"},
			map[string]any{"rows": []any{[]any{"France", 28}, []any{"Germany", 15}}, "group_count": 2}},
		{"change by month", map[string]any{"file_id": daily, "group_by": []any{month}, "measures": []any{m("sum", "cases"),
			map[string]any{"op": "change", "of": "sum_cases"}, map[string]any{"op": "pct_change", "of": "sum_cases"},
			map[string]any{"op": "running_total", "of": "sum_cases"}}},
			map[string]any{"columns": []any{"day_month", "sum_cases", "change_sum_cases", "pct_change_sum_cases", "running_sum_cases"},
				"rows": []any{[]any{"2020-01-01", 3, nil, nil, 3}, []any{"2020-02-01", 13, 10, 10.0 / 3, 16}, []any{"2020-03-01", 39, 26, 2, 55}}}},
		{"rank within month", map[string]any{"file_id": daily, "group_by": []any{month, "country"}, "measures": []any{m("sum", "cases"),
			map[string]any{"op": "rank", "of": "sum_cases", "within": []any{"day_month"}}},
			"filters": []any{f("day", "gte", "2020-03-01")}, "sort_by": "rank_sum_cases"},
			map[string]any{"rows": []any{[]any{"2020-03-01", "France", 20, 1}, []any{"2020-03-01", "Germany", 10, 2}, []any{"2020-03-01", "Spain", 9, 3}}}},
		{"biggest day of each country", map[string]any{"file_id": daily, "group_by": []any{"country", "day"}, "measures": []any{m("sum", "cases")},
			"top": map[string]any{"n": 1, "per": []any{"country"}, "by": "sum_cases"}, "sort_by": "country"},
			map[string]any{"rows": []any{[]any{"France", "2020-03-02", 20}, []any{"Germany", "2020-03-01", 10}, []any{"Spain", "2020-03-03", 9}}}},
		{"cases per continent", map[string]any{"file_id": daily, "group_by": []any{"lookup.continent"}, "measures": []any{m("sum", "cases"), m("max", "lookup.population")},
			"lookup": map[string]any{"file_id": countries, "on": []any{map[string]any{"column": "country", "lookup_column": "name"}}}},
			map[string]any{"columns": []any{"lookup_continent", "sum_cases", "max_lookup_population"}, "rows": []any{[]any{"Europe", 55, 83000000}}}},
		// A lookup column is spelled lookup.key everywhere, as in groups.
		{"the biggest country of each continent", map[string]any{"file_id": daily, "group_by": []any{"lookup.continent", "country"}, "measures": []any{m("sum", "cases")},
			"lookup": map[string]any{"file_id": countries, "on": []any{map[string]any{"column": "country", "lookup_column": "name"}}},
			"top":    map[string]any{"n": 1, "per": []any{"lookup.continent"}, "by": "sum_cases"}, "sort_by": "lookup.continent"},
			map[string]any{"rows": []any{[]any{"Europe", "France", 28}}}},
		{"Spain, or France past 5 cases", map[string]any{"file_id": daily, "filters": []any{map[string]any{"any": []any{
			f("country", "eq", "Spain"), map[string]any{"all": []any{f("country", "eq", "France"), f("cases", "gt", 5)}}}}}},
			map[string]any{"matched_row_count": 4}},
		{"codes starting with 06", map[string]any{"file_id": daily, "filters": []any{f("fips", "starts_with", "06")}},
			map[string]any{"matched_row_count": 3}},
		{"codes ending with 06", map[string]any{"file_id": daily, "filters": []any{f("fips", "ends_with", "06")}},
			map[string]any{"matched_row_count": 2}},
		{"not Germany nor Spain", map[string]any{"file_id": daily, "filters": []any{f("country", "not_in", []any{"Germany", "Spain"})}},
			map[string]any{"matched_row_count": 3}},
		{"February", map[string]any{"file_id": daily, "filters": []any{f("day", "between", []any{"2020-02-01", "2020-02-29"})}},
			map[string]any{"matched_row_count": 3}},
		{"blank deaths", map[string]any{"file_id": daily, "filters": []any{f("deaths", "is_blank", true)}},
			map[string]any{"matched_row_count": 1}},
	}
}

// setupDaily uploads the daily counts and the country lookup table.
func setupDaily(t *testing.T, ts *apitest.Server, token string) (daily, countries string) {
	t.Helper()
	ids := make([]string, 2)
	for i, up := range [][2]string{{"daily.csv", dailyCSV}, {"countries.csv", countriesCSV}} {
		code, m := ts.Upload(token, up[0], []byte(up[1]))
		if code != http.StatusCreated {
			t.Fatalf("upload %s: %d %v", up[0], code, m)
		}
		ids[i] = m["file"].(map[string]any)["id"].(string)
	}
	return ids[0], ids[1]
}

// checkFields compares an answer's fields with want, as JSON.
func checkFields(t *testing.T, got, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if g := apitest.MustJSON(got[k]); g != apitest.MustJSON(w) {
			t.Errorf("%s: got %s, want %s", k, g, apitest.MustJSON(w))
		}
	}
}

func TestAnalyzeTableQuestions(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	daily, countries := setupDaily(t, ts, token)
	for _, q := range analysisQuestions(daily, countries) {
		t.Run(q.name, func(t *testing.T) {
			code, m := ts.Call(token, "files.analyze_table", q.args)
			if code != http.StatusOK {
				t.Fatalf("got %d %v", code, m)
			}
			checkFields(t, m["result"].(map[string]any), q.want)
		})
	}
}

// TestAnalyzeTableRegressions asks, on files of the same shape, the
// questions that were answered wrong without a warning.
func TestAnalyzeTableRegressions(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	daily, _ := setupDaily(t, ts, token)
	code, up := ts.Upload(token, "locode.csv", locodeFiles(t)["locode.csv"])
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	locode := up["file"].(map[string]any)["id"].(string)
	tests := []struct {
		name string
		args map[string]any
		want map[string]any
	}{
		// A prefix is not a substring: "10600" contains 06 but does not
		// start with it.
		{"fips starts with 06", map[string]any{"file_id": daily, "filters": []any{f("fips", "starts_with", "06")}}, map[string]any{"matched_row_count": 3}},
		{"fips contains 06", map[string]any{"file_id": daily, "filters": []any{f("fips", "contains", "06")}}, map[string]any{"matched_row_count": 8}},
		// Two spaces are no code.
		{"iata present", map[string]any{"file_id": locode, "filters": []any{f("iata", "is_null", false)}}, map[string]any{"matched_row_count": 5}},
		{"iata blank", map[string]any{"file_id": locode, "filters": []any{f("iata", "is_blank", true)}}, map[string]any{"matched_row_count": 2}},
		// Padded codes are one group; the empty group is said.
		{"codes", map[string]any{"file_id": locode, "group_by": []any{"iata"}, "measures": []any{m("count", "")}, "sort_by": "iata"},
			map[string]any{"group_count": 5, "rows": []any{[]any{"BER", 1}, []any{"MAD", 1}, []any{"PAR", 1}, []any{"RL", 2}, []any{nil, 2}},
				"notes": []any{"group_count includes the group of empty iata values"}}},
		{"distinct codes", map[string]any{"file_id": locode, "measures": []any{m("count_distinct", "iata")}}, map[string]any{"rows": []any{[]any{4}}}},
		// A right eq filter is never blamed for another filter's miss.
		{"Germany past ten million deaths", map[string]any{"file_id": daily, "filters": []any{f("country", "eq", "Germany"), f("deaths", "gt", 10000000)}},
			map[string]any{"matched_row_count": 0, "hint": nil}},
		{"germany misspelt", map[string]any{"file_id": daily, "filters": []any{f("country", "eq", " germany")}},
			map[string]any{"matched_row_count": 0, "hint": `no country equals " germany"; near values (ignoring case and spaces): "Germany".`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, m := ts.Call(token, "files.analyze_table", tc.args)
			if code != http.StatusOK {
				t.Fatalf("got %d %v", code, m)
			}
			checkFields(t, m["result"].(map[string]any), tc.want)
		})
	}
}

// TestAnalyzeTableErrors: each bad argument is a 400 naming it.
func TestAnalyzeTableErrors(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	daily, countries := setupDaily(t, ts, token)
	code, up := ts.Upload(token, "twice.csv", []byte("name,continent\nSpain,Europe\nSpain,Africa\nFrance,Europe\nFrance,Europe\nJapan,Asia\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	twice := up["file"].(map[string]any)["id"].(string)
	on := []any{map[string]any{"column": "country", "lookup_column": "name"}}
	tests := []struct {
		name   string
		args   map[string]any
		status int
		field  string
		says   string
	}{
		{"expr position", map[string]any{"file_id": daily, "measures": []any{m("sum", "cases"), map[string]any{"name": "x", "expr": "sum_cases / * 2"}}},
			400, "measures[1].expr", "position 13"},
		{"expr unknown measure", map[string]any{"file_id": daily, "measures": []any{m("sum", "cases"), map[string]any{"name": "x", "expr": "sum_cases / sum_deaths"}}},
			400, "measures[1].expr", "sum_deaths"},
		{"unknown measure op", map[string]any{"file_id": daily, "measures": []any{m("no_such_op", "cases")}}, 400, "measures[0].op", "median"},
		{"unknown column", map[string]any{"file_id": daily, "group_by": []any{"colour"}}, 400, "group_by[0]", "colour"},
		{"bucket of text", map[string]any{"file_id": daily, "group_by": []any{map[string]any{"column": "country", "bucket": "month"}}}, 400, "group_by[0]", "date"},
		{"sum of text", map[string]any{"file_id": daily, "measures": []any{m("sum", "country")}}, 400, "measures[0]", "country"},
		{"having on no measure", map[string]any{"file_id": daily, "group_by": []any{"country"}, "having": []any{map[string]any{"measure": "total", "op": "gt", "value": 1}}},
			400, "having[0].measure", "total"},
		{"page too large", map[string]any{"file_id": daily, "group_by": []any{"country"}, "limit": 51}, 400, "limit", "at most 50"},
		{"between one value", map[string]any{"file_id": daily, "filters": []any{f("cases", "between", []any{1})}}, 400, "filters[0].value", "[low, high]"},
		{"repeated lookup keys", map[string]any{"file_id": daily, "group_by": []any{"lookup.continent"}, "lookup": map[string]any{"file_id": twice, "on": on}},
			400, "lookup.on", "2 keys repeat"},
		{"lookup not found", map[string]any{"file_id": daily, "lookup": map[string]any{"file_id": "tbl_nope", "on": on}}, 404, "lookup.file_id", "tbl_nope"},
		{"lookup column unknown", map[string]any{"file_id": daily, "group_by": []any{"lookup.colour"}, "lookup": map[string]any{"file_id": countries, "on": on}},
			400, "group_by[0]", "colour"},
		{"unknown argument", map[string]any{"file_id": daily, "groupby": []any{"country"}}, 400, "groupby", "groupby"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, m := ts.Call(token, "files.analyze_table", tc.args)
			e, _ := m["error"].(map[string]any)
			if code != tc.status || e == nil {
				t.Fatalf("got %d %v, want %d", code, m, tc.status)
			}
			msg := fmt.Sprint(e["message"])
			if !strings.HasPrefix(fmt.Sprint(e["field"]), tc.field) || !strings.Contains(msg, tc.says) {
				t.Errorf("error %v, want field %s saying %q", e, tc.field, tc.says)
			}
		})
	}
}

// TestAnalyzeTableOffload: past the offload bounds the whole result is
// stored as a table and the answer keeps what fits; a viewer, who may not
// create tables unasked, pages instead, and waits for approval to store.
func TestAnalyzeTableOffload(t *testing.T) {
	t.Parallel()
	// Viewers here may upload, to have tables of their own.
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 1 << 20}, Policy: rbac.DefaultPolicy + "\np, role:viewer, files.upload, true, allow, allow\n"})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	vic := apitest.AddUser(t, users, "vic", "viewer")
	var b strings.Builder
	b.WriteString("city,day,sales\n")
	// Names long enough that a page of 50 groups is past the answer's
	// 12,000 characters.
	pad := strings.Repeat("x", 300)
	for i := range 120 {
		fmt.Fprintf(&b, "city %03d %s,2024-01-%02d,%d\n", i%60, pad, 1+i%28, i)
	}
	args := func(id string) map[string]any {
		return map[string]any{"file_id": id, "group_by": []any{"city"}, "measures": []any{m("sum", "sales"), m("max", "day")}, "limit": 50}
	}
	for _, who := range []struct {
		name, token string
		stored      bool
	}{{"analyst", ana, true}, {"viewer", vic, false}} {
		t.Run(who.name, func(t *testing.T) {
			code, up := ts.Upload(who.token, "cities.csv", []byte(b.String()))
			if code != http.StatusCreated {
				t.Fatalf("upload: %d %v", code, up)
			}
			id := up["file"].(map[string]any)["id"].(string)
			code, m := ts.Call(who.token, "files.analyze_table", args(id))
			if code != http.StatusOK {
				t.Fatalf("got %d %v", code, m)
			}
			res := m["result"].(map[string]any)
			rows := res["rows"].([]any)
			if len(rows) == 0 || len(rows) >= 50 || res["has_more"] != true || res["group_count"] != 60.0 {
				t.Fatalf("answer of %d rows: %v", len(rows), apitest.MustJSON(res))
			}
			view, _ := res["view"].(map[string]any)
			if (view != nil) != who.stored {
				t.Fatalf("stored %v, want %v: %v", view != nil, who.stored, apitest.MustJSON(res))
			}
			if !who.stored {
				return
			}
			code, m = ts.Call(who.token, "files.query_table", map[string]any{"file_id": view["table_id"], "sort_by": "sum_sales", "direction": "desc", "limit": 1,
				"columns": []any{"city", "sum_sales", "max_day"}})
			got := m["result"].(map[string]any)
			if code != http.StatusOK || got["source_row_count"] != 60.0 || apitest.MustJSON(got["rows"]) != `[["city 059 `+pad+`",178,"2024-01-08"]]` {
				t.Errorf("the stored result: %d %s", code, apitest.MustJSON(m))
			}
		})
	}
	// A viewer who asks to store waits for approval.
	code, up := ts.Upload(vic, "cities2.csv", []byte(b.String()))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	a := args(up["file"].(map[string]any)["id"].(string))
	a["show"] = true
	if code, m := ts.Call(vic, "files.analyze_table", a); code != http.StatusAccepted {
		t.Errorf("viewer's show: %d %v, want 202", code, m)
	}
}

// TestAnalyzeTableAnswerSize: twenty groups of two measures stay small,
// and the MCP text, which carries the same rows for hosts that pass only
// text, is no larger than the structured answer.
func TestAnalyzeTableAnswerSize(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	id := uploadSP500(t, ts, token)
	args := map[string]any{"file_id": id, "group_by": []any{"symbol"}, "limit": 20,
		"measures": []any{m("sum", "market_cap"), m("avg", "price")}}
	code, _, raw := ts.DoJSON("POST", "/v1/tools/files.analyze_table", token, map[string]any{"arguments": args})
	if code != http.StatusOK {
		t.Fatalf("got %d %s", code, raw)
	}
	t.Logf("%d bytes: %s", len(raw), raw)
	if len(raw) > 1500 {
		t.Errorf("answer is %d bytes, want at most 1500", len(raw))
	}
	cs := apitest.MCPTransports["http"](t, ts, token)
	res, structured := apitest.CallMCP(t, cs, "files_analyze_table", args)
	if res.IsError {
		t.Fatalf("mcp: %s", apitest.TextOf(res))
	}
	text, body := len(apitest.TextOf(res)), len(apitest.MustJSON(structured))
	t.Logf("mcp text %d bytes beside %d: %q", text, body, apitest.TextOf(res))
	if text > body {
		t.Errorf("mcp text of %d bytes is larger than the structured answer of %d", text, body)
	}
}

// TestAnalyzeTableOverMCP asks each question with the MCP SDK's client,
// over both transports: the structured answer is the HTTP one.
func TestAnalyzeTableOverMCP(t *testing.T) {
	t.Parallel()
	for name, connect := range apitest.MCPTransports {
		t.Run(name, func(t *testing.T) {
			ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
			users := ts.Users
			token := apitest.AddUser(t, users, "ana", "analyst")
			daily, countries := setupDaily(t, ts, token)
			cs := connect(t, ts, token)
			for _, q := range analysisQuestions(daily, countries) {
				res, got := apitest.CallMCP(t, cs, "files_analyze_table", q.args)
				if res.IsError {
					t.Errorf("%s: %s", q.name, apitest.TextOf(res))
					continue
				}
				checkFields(t, got, q.want)
				if _, m := ts.Call(token, "files.analyze_table", q.args); apitest.MustJSON(got) != apitest.MustJSON(m["result"]) {
					t.Errorf("%s:\n mcp  %s\n http %s", q.name, apitest.MustJSON(got), apitest.MustJSON(m["result"]))
				}
				if txt := apitest.TextOf(res); !strings.Contains(txt, "rows match") {
					t.Errorf("%s: summary %q", q.name, txt)
				}
			}
		})
	}
}

// TestWebSummaryCountsAsTools: the web page's column summary counts the
// distinct values files.analyze_table counts, blanks and padding aside.
func TestWebSummaryCountsAsTools(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	_, up := ts.Upload(ana, "locode.csv", locodeFiles(t)["locode.csv"])
	file := up["file"].(map[string]any)
	client, _, _ := ts.SignIn("ana", "correct horse battery")
	for _, col := range []string{"iata", "country", "lat"} {
		_, ans := ts.Call(ana, "files.analyze_table", map[string]any{"file_id": file["id"], "measures": []any{m("count_distinct", col)}})
		want := apitest.MustJSON(ans["result"].(map[string]any)["rows"].([]any)[0].([]any)[0])
		resp, err := client.Get(ts.URL + "/tables/" + file["table_id"].(string) + "?summary=" + col)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := regexp.MustCompile(`id="facet-` + col + `-distinct">([^<]*)<`).FindSubmatch(body)
		if got == nil || string(got[1]) != want {
			t.Errorf("%s: the page counts %q distinct values, the tool %s", col, got, want)
		}
	}
}

// TestAnalyzeChainedMeasures: measures that each use the one before 16
// times (the finding that kept a core busy for minutes) answer within a
// second.
func TestAnalyzeChainedMeasures(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it would stretch.
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	daily, _ := setupDaily(t, ts, token)
	ms := []any{map[string]any{"op": "count"}, map[string]any{"name": "a0", "expr": "count/count"}}
	for i := 1; i <= 7; i++ {
		ms = append(ms, map[string]any{"name": fmt.Sprintf("a%d", i), "expr": strings.TrimSuffix(strings.Repeat(fmt.Sprintf("a%d*", i-1), 16), "*")})
	}
	start := time.Now()
	code, m := ts.Call(token, "files.analyze_table", map[string]any{"file_id": daily, "group_by": []any{"country"}, "measures": ms})
	if d := time.Since(start); d > time.Second {
		t.Errorf("the call took %v, want under a second", d)
	}
	if code != http.StatusOK {
		t.Fatalf("got %d %v", code, m)
	}
	for _, row := range m["result"].(map[string]any)["rows"].([]any) {
		if v := row.([]any)[len(ms)]; v != 1.0 {
			t.Errorf("a7 = %v, want 1", v)
		}
	}
}
