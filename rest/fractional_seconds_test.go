package rest_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"datadesk/api/apitest"

	"github.com/xuri/excelize/v2"
)

// TestFractionalSecondsRoundTrip follows 2024-03-01 10:00:00.123456 from a
// CSV upload through rows, query_table, every export of the stored table,
// files.create from it, and files.create's own datetime cells (with Z and
// an offset, stored in UTC): the microseconds survive everywhere.
func TestFractionalSecondsRoundTrip(t *testing.T) {
	t.Parallel()
	const want = "2024-03-01T10:00:00.123456"
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, m := ts.Upload(token, "times.csv", []byte("at,n\n2024-03-01 10:00:00.123456,1\n2024-03-02 11:30:00,2\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	tid := m["file"].(map[string]any)["table_id"].(string)

	code, raw := ts.Get(token, "/v1/tables/"+tid+"/rows")
	if code != 200 || !bytes.Contains(raw, []byte(`"`+want+`"`)) {
		t.Errorf("rows: %d %s", code, raw)
	}
	code, q := ts.Call(token, "files.query_table", map[string]any{"file_id": tid, "limit": 1,
		"filters": []any{map[string]any{"column": "at", "op": "eq", "value": "2024-03-01T10:00:00.123456"}}})
	if code != 200 || apitest.MustJSON(q["result"].(map[string]any)["rows"]) != `[["`+want+`",1]]` {
		t.Errorf("query_table: %d %v", code, q)
	}

	check := func(t *testing.T, format string, body []byte) {
		t.Helper()
		var got string
		switch format {
		case "json":
			var tj struct{ Rows [][]any }
			if err := json.Unmarshal(body, &tj); err != nil {
				t.Fatal(err)
			}
			got = fmt.Sprint(tj.Rows[0][0])
		case "csv":
			rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			got = rows[1][0]
		case "xlsx":
			x, err := excelize.OpenReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			v, err := x.GetCellValue(x.GetSheetList()[0], "A2", excelize.Options{RawCellValue: true})
			if err != nil {
				t.Fatal(err)
			}
			serial, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("A2 is not a date cell: %q", v)
			}
			// A cell holds 15 significant digits, about 9 microseconds of a
			// day near 2024: XLSX keeps milliseconds, Excel's resolution,
			// and openpyxl and xlrd read them to the millisecond too.
			millis := time.Duration(math.Round(serial*86400e3)) * time.Millisecond
			got = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).Add(millis).Format("2006-01-02T15:04:05.000")
			if w := want[:len("2006-01-02T15:04:05.000")]; got != w {
				t.Errorf("%s: got %s, want %s", format, got, w)
			}
			return
		}
		if got != want {
			t.Errorf("%s: got %s, want %s", format, got, want)
		}
	}
	for _, format := range []string{"json", "csv", "xlsx"} {
		t.Run("export "+format, func(t *testing.T) {
			code, body := ts.Get(token, "/v1/tables/"+tid+"/export?format="+format)
			if code != 200 {
				t.Fatalf("export: %d %s", code, body)
			}
			check(t, format, body)
		})
		t.Run("files.create "+format+" from the table", func(t *testing.T) {
			code, m := ts.Call(token, "files.create", map[string]any{"filename": "copy." + format, "source_file_id": tid})
			if code != 200 {
				t.Fatalf("files.create: %d %v", code, m)
			}
			_, body := ts.Get("", fileOf(t, m)["download_url"].(string))
			check(t, format, body)
		})
		t.Run("files.create "+format+" datetime", func(t *testing.T) {
			code, m := ts.Call(token, "files.create", map[string]any{"filename": "made." + format,
				"columns": []any{map[string]any{"key": "at", "label": "at", "type": "datetime"}},
				"rows":    []any{[]any{"2024-03-01T12:00:00.123456+02:00"}, []any{"2024-03-01T10:00:00Z"}}})
			if code != 200 {
				t.Fatalf("files.create: %d %v", code, m)
			}
			_, body := ts.Get("", fileOf(t, m)["download_url"].(string))
			check(t, format, body)
			if format == "xlsx" {
				return // an XLSX file is not a stored table
			}
			code, raw := ts.Get(token, "/v1/tables/"+fileOf(t, m)["table_id"].(string)+"/rows")
			if code != 200 || !bytes.Contains(raw, []byte(`"`+want+`"`)) {
				t.Errorf("the stored table's rows: %d %s", code, raw)
			}
		})
	}
}
