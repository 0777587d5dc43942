package rest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"

	"github.com/xuri/excelize/v2"
)

// locodes is a table shaped like UN/LOCODE: iata holds two spaces where a
// place has no code, and codes padded to the column's width.
var locodes = [][]string{
	{"country", "name", "iata", "lat"},
	{"DE", "Berlin", "BER", "52.52000000"},
	{"DE", "Hamburg", "  ", "53.55000000"},
	{"FR", "Paris", "PAR ", "48.85660000"},
	{"FR", "Lyon", "  ", "45.76400000"},
	{"ES", "Madrid", "MAD", "40.41680000"},
	{"ES", "Rota", "RL  ", "36.61700000"},
	{"ES", "Rota bay", "RL", "33.93911000"},
}

// locodeFiles writes locodes as CSV, JSON records and XLSX.
func locodeFiles(t *testing.T) map[string][]byte {
	t.Helper()
	var csv, js strings.Builder
	js.WriteString("[")
	for i, r := range locodes {
		csv.WriteString(strings.Join(r, ",") + "\n")
		if i == 0 {
			continue
		}
		if i > 1 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, `{"country":%q,"name":%q,"iata":%q,"lat":%s}`, r[0], r[1], r[2], r[3])
	}
	js.WriteString("]")
	x := excelize.NewFile()
	defer x.Close()
	for i, r := range locodes {
		for j, v := range r {
			cell, _ := excelize.CoordinatesToCellName(j+1, i+1)
			if j == 3 && i > 0 {
				var f float64
				fmt.Sscan(v, &f)
				x.SetCellValue("Sheet1", cell, f)
				continue
			}
			x.SetCellStr("Sheet1", cell, v)
		}
	}
	var xb bytes.Buffer
	if err := x.Write(&xb); err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"locode.csv": []byte(csv.String()), "locode.json": []byte(js.String()), "locode.xlsx": xb.Bytes()}
}

// TestBlankAndPaddedCells: a cell of only spaces is empty in every format,
// padded codes are one value, the report says what changed, and the
// original bytes stay as uploaded.
func TestBlankAndPaddedCells(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	for name, content := range locodeFiles(t) {
		t.Run(name, func(t *testing.T) {
			code, m := ts.Upload(token, name, content)
			if code != http.StatusCreated {
				t.Fatalf("upload: %d %v", code, m)
			}
			id := m["file"].(map[string]any)["id"].(string)
			table := m["tables"].([]any)[0].(map[string]any)
			report := table["import_report"].(map[string]any)
			for _, c := range report["columns"].([]any) {
				col := c.(map[string]any)
				if col["key"] != "iata" {
					continue
				}
				if col["blank_cells"] != 2.0 || col["trimmed_values"] != 2.0 {
					t.Errorf("iata's report: %v, want 2 blank cells and 2 trimmed values", col)
				}
			}
			code, m = ts.Call(token, "files.query_table", map[string]any{"file_id": id,
				"filters": []any{map[string]any{"column": "iata", "op": "is_null", "value": false}}})
			if got := m["result"].(map[string]any)["matched_row_count"]; code != 200 || got != 5.0 {
				t.Errorf("iata is_null false: %d %v, want 5", code, got)
			}
			code, m = ts.Call(token, "files.query_table", map[string]any{"file_id": id, "group_by": []any{"iata"}})
			res := m["result"].(map[string]any)
			if code != 200 || res["group_count"] != 5.0 {
				t.Fatalf("groups of iata: %d %v, want 5 (BER, MAD, PAR, RL and the empty group)", code, res)
			}
			if notes, _ := res["notes"].([]any); len(notes) != 1 || !strings.Contains(notes[0].(string), "empty iata") {
				t.Errorf("notes %v, want one saying the empty group is counted", res["notes"])
			}
			code, _, raw := ts.Do("GET", "/v1/files/"+id+"/content", token, nil, "")
			if code != 200 || !bytes.Equal(raw, content) {
				t.Errorf("the stored file differs from the upload (%d)", code)
			}
		})
	}
}

// TestDecimalTextAsWritten: text filters read a decimal as written, not
// padded to its column's scale.
func TestDecimalTextAsWritten(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, m := ts.Upload(token, "locode.csv", locodeFiles(t)["locode.csv"])
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	id := m["file"].(map[string]any)["id"].(string)
	for value, want := range map[string]float64{"33.93911": 1, "911000": 0, "52.52": 1, "52.520": 0, "8566": 1} {
		code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": id,
			"filters": []any{map[string]any{"column": "lat", "op": "contains", "value": value}}})
		if got := m["result"].(map[string]any)["matched_row_count"]; code != 200 || got != want {
			t.Errorf("lat contains %q: %d %v, want %v", value, code, got, want)
		}
	}
}

// TestHintBlamesOnlyAFilterThatMissesAlone: with a right eq filter and a
// filter no row meets, the hint does not blame the right one, nor offer
// the value it gave.
func TestHintBlamesOnlyAFilterThatMissesAlone(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	csv := "country,deaths\nGermany,100\ngermany ,5\nFrance,7\n"
	code, m := ts.Upload(token, "covid.csv", []byte(csv))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	id := m["file"].(map[string]any)["id"].(string)
	for _, tc := range []struct {
		filters []any
		hint    string
	}{
		{[]any{map[string]any{"column": "country", "op": "eq", "value": "Germany"}, map[string]any{"column": "deaths", "op": "gt", "value": 10000000}}, ""},
		{[]any{map[string]any{"column": "country", "op": "eq", "value": "Ger many"}}, `near values (ignoring case and spaces): "Germany", "germany".`},
		{[]any{map[string]any{"column": "country", "op": "in", "value": []any{"Germany", "Spain"}}, map[string]any{"column": "deaths", "op": "lt", "value": 0}}, ""},
	} {
		code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": id, "filters": tc.filters})
		res := m["result"].(map[string]any)
		hint, _ := res["hint"].(string)
		if code != 200 || res["matched_row_count"] != 0.0 || !strings.HasSuffix(hint, tc.hint) || (tc.hint == "") != (hint == "") {
			t.Errorf("%v: %d hint %q, want %q", tc.filters, code, hint, tc.hint)
		}
	}
}
