package rest_test

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"

	"github.com/xuri/excelize/v2"
)

// TestAnySheetNameExports: a workbook whose sheet was titled 'abc' gave a
// 500, and its XLSX export answered 200 with an empty body. Every sheet
// name a workbook may hold is stored and exported as a workbook that
// opens; an export that cannot be written is an error, never an empty 200.
func TestAnySheetNameExports(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	names := []string{"'abc'", "Ana's sheet", "見積書と請求書の一覧表二〇二四年度第三四半期分", "😀 emoji ☃", "a[1]*?/\\:b", "History"}
	f := excelize.NewFile()
	for i := range names {
		if i == 0 {
			if err := f.SetSheetName("Sheet1", "x"); err != nil {
				t.Fatal(err)
			}
		} else if _, err := f.NewSheet("x" + string(rune('0'+i))); err != nil {
			t.Fatal(err)
		}
		sheet := f.GetSheetList()[i]
		f.SetSheetRow(sheet, "A1", &[]any{"id", "v"})
		f.SetSheetRow(sheet, "A2", &[]any{"0001", i})
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	// excelize refuses some of these names itself; the workbook's XML
	// gets them as other writers save them.
	book := bytes.Clone(b.Bytes())
	book = renameSheets(t, book, f.GetSheetList(), names)
	code, m := ts.Upload(ana, "names.xlsx", book)
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	for _, tb := range m["tables"].([]any) {
		id := tb.(map[string]any)["id"].(string)
		for _, format := range []string{"xlsx", "csv", "json"} {
			code, raw := ts.Get(ana, "/v1/tables/"+id+"/export?format="+format)
			if code != http.StatusOK || len(raw) == 0 {
				t.Errorf("%s export of %q: %d, %d bytes", format, tb.(map[string]any)["name"], code, len(raw))
				continue
			}
			if format == "xlsx" {
				x, err := excelize.OpenReader(bytes.NewReader(raw))
				if err != nil {
					t.Errorf("xlsx export of %q does not open: %v", tb.(map[string]any)["name"], err)
					continue
				}
				rows, _ := x.GetRows(x.GetSheetList()[0])
				if len(rows) != 2 || rows[1][0] != "0001" {
					t.Errorf("xlsx export of %q: %v", tb.(map[string]any)["name"], rows)
				}
			}
		}
	}
}

// renameSheets rewrites the sheet names in a workbook's XML, as writers
// that allow more than excelize does save them.
func renameSheets(t *testing.T, book []byte, from, to []string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(book), int64(len(book)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == "xl/workbook.xml" {
			for i := range from {
				var esc bytes.Buffer
				xml.EscapeText(&esc, []byte(to[i]))
				body = bytes.Replace(body, []byte(`name="`+from[i]+`"`), []byte(`name="`+strings.ReplaceAll(esc.String(), `"`, "&quot;")+`"`), 1)
			}
		}
		w, _ := zw.Create(f.Name)
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
