package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/api/apitest"

	"github.com/xuri/excelize/v2"
)

// TestTimesOfDay: a spreadsheet column of times of day is stored as TIME,
// filtered and sorted as times, and exported as real Excel times (openpyxl
// reads datetime.time) and as HH:MM:SS text in CSV.
func TestTimesOfDay(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	x := excelize.NewFile()
	clock, err := x.NewStyle(&excelize.Style{NumFmt: 21})
	if err != nil {
		t.Fatal(err)
	}
	x.SetSheetRow("Sheet1", "A1", &[]any{"shop", "opens"})
	for i, v := range []float64{0.3541666666666667, 0.5, 0.375} {
		cell, _ := excelize.CoordinatesToCellName(2, i+2)
		name, _ := excelize.CoordinatesToCellName(1, i+2)
		x.SetCellStr("Sheet1", name, []string{"north", "south", "east"}[i])
		x.SetCellFloat("Sheet1", cell, v, -1, 64)
		x.SetCellStyle("Sheet1", cell, cell, clock)
	}
	var b bytes.Buffer
	if err := x.Write(&b); err != nil {
		t.Fatal(err)
	}
	code, up := ts.Upload(token, "shops.xlsx", b.Bytes())
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	table := up["tables"].([]any)[0].(map[string]any)
	if typ := table["columns"].([]any)[1].(map[string]any)["type"]; typ != "time" {
		t.Fatalf("opens typed %v, want time", typ)
	}
	fileID := up["file"].(map[string]any)["id"].(string)
	code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": fileID, "columns": []any{"shop", "opens"},
		"filters": []any{map[string]any{"column": "opens", "op": "gte", "value": "09:00"}}, "sort_by": "opens", "limit": 5})
	if res, _ := m["result"].(map[string]any); code != http.StatusOK || apitest.MustJSON(res["rows"]) != `[["east","09:00:00"],["south","12:00:00"]]` {
		t.Errorf("times filtered and sorted: %d %v", code, apitest.MustJSON(m))
	}
	code, m = ts.Call(token, "files.query_table", map[string]any{"file_id": fileID,
		"filters": []any{map[string]any{"column": "opens", "op": "eq", "value": "nine"}}})
	if code != http.StatusBadRequest || !strings.Contains(apitest.MustJSON(m), "time of day") {
		t.Errorf("a time filter that is no time: %d %v", code, m)
	}
	tableID := table["id"].(string)
	_, csv := ts.Get(token, "/v1/tables/"+tableID+"/export?format=csv")
	if !strings.Contains(string(csv), "north,08:30:00") {
		t.Errorf("CSV export:\n%s", csv)
	}
	_, xlsx := ts.Get(token, "/v1/tables/"+tableID+"/export?format=xlsx")
	python, err := exec.LookPath("/usr/bin/python3")
	if err != nil || exec.Command(python, "-c", "import openpyxl").Run() != nil {
		return
	}
	path := filepath.Join(t.TempDir(), "shops.xlsx")
	if err := os.WriteFile(path, xlsx, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, "../exports/testdata/read_xlsx.py", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var sheets map[string]struct{ Rows [][][]any }
	if err := json.Unmarshal(out, &sheets); err != nil {
		t.Fatal(err)
	}
	for _, s := range sheets {
		if len(s.Rows) < 2 || s.Rows[1][1][0] != "08:30:00" || s.Rows[1][1][1] != "hh:mm:ss" {
			t.Errorf("openpyxl reads %v, want the time 08:30:00 formatted hh:mm:ss", s.Rows)
		}
		break
	}
}
