package rest_test

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/links"

	"github.com/xuri/excelize/v2"
)

func fileOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	return res["file"].(map[string]any)
}

var tableArgs = map[string]any{
	"columns": []any{"Customer ID", map[string]any{"key": "amount", "label": "Amount", "type": "number"},
		map[string]any{"key": "day", "label": "Day", "type": "date"}, "Active", "Note", "Big"},
	"rows": []any{
		[]any{"00123", -12.5, "2024-01-31", true, "Zoë 日本", "12345678901234567890"},
		map[string]any{"customer_id": "007", "amount": 3, "Active": false, "Note": "=cmd"},
		[]any{nil, nil, nil, nil, nil, nil},
	},
}

func withFilename(name string, args map[string]any) map[string]any {
	out := map[string]any{"filename": name}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// TestCreateFromRowsRoundTrips writes each table format from columns and
// rows and reads the download back by value.
func TestCreateFromRowsRoundTrips(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	for _, name := range []string{"out.xlsx", "out.csv", "out.json"} {
		t.Run(name, func(t *testing.T) {
			code, m := ts.Call(token, "files.create", withFilename(name, tableArgs))
			if code != 200 {
				t.Fatalf("got %d %v", code, m)
			}
			f := fileOf(t, m)
			if f["row_count"] != 3.0 || f["column_count"] != 6.0 || f["preview_url"] == "" {
				t.Errorf("descriptor %v", f)
			}
			if _, ok := m["result"].(map[string]any)["rows"]; ok {
				t.Errorf("the answer carries rows")
			}
			code, body := ts.Get("", f["download_url"].(string))
			if code != 200 {
				t.Fatalf("download: %d %s", code, body)
			}
			var rows [][]string
			switch name {
			case "out.xlsx":
				x, err := excelize.OpenReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				rows, _ = x.GetRows(x.GetSheetList()[0])
				if typ, _ := x.GetCellType(x.GetSheetList()[0], "A2"); typ != excelize.CellTypeInlineString {
					t.Errorf("00123 is not a text cell: %v", typ)
				}
				if typ, _ := x.GetCellType(x.GetSheetList()[0], "B2"); typ != excelize.CellTypeUnset {
					t.Errorf("-12.5 is not a number cell: %v", typ)
				}
			case "out.csv":
				rows, _ = csv.NewReader(bytes.NewReader(body)).ReadAll()
			case "out.json":
				var tj struct{ Rows [][]any }
				d := json.NewDecoder(bytes.NewReader(body))
				d.UseNumber()
				if err := d.Decode(&tj); err != nil {
					t.Fatal(err)
				}
				rows = [][]string{{"Customer ID"}}
				for _, r := range tj.Rows {
					var s []string
					for _, v := range r {
						if v == nil {
							s = append(s, "")
						} else {
							s = append(s, fmt.Sprint(v))
						}
					}
					rows = append(rows, s)
				}
			}
			if rows[1][0] != "00123" || rows[2][0] != "007" || !strings.HasPrefix(rows[1][1], "-12.5") || rows[1][2] != "2024-01-31" ||
				!strings.EqualFold(rows[1][3], "true") && rows[1][3] != "TRUE" || rows[1][4] != "Zoë 日本" || rows[1][5] != "12345678901234567890" {
				t.Errorf("row 1: %q", rows[1])
			}
			if name == "out.csv" && rows[2][4] != "'=cmd" {
				t.Errorf("formula not neutralised: %q", rows[2][4])
			}
			// The stored table keeps the same types.
			_, tm, _ := ts.Do("GET", "/v1/tables/"+f["table_id"].(string), token, nil, "")
			var types []string
			for _, c := range tm["table"].(map[string]any)["columns"].([]any) {
				types = append(types, c.(map[string]any)["type"].(string))
			}
			if got := strings.Join(types, ","); got != "text,decimal,date,boolean,text,text" {
				t.Errorf("stored types %s", got)
			}
		})
	}
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	tests := []struct {
		name  string
		args  map[string]any
		field string
		says  string
	}{
		{"no form", map[string]any{"filename": "a.txt"}, "arguments", "exactly one of"},
		{"two forms", map[string]any{"filename": "a.txt", "content": "x", "file_ids": []any{"f_x"}}, "arguments", "exactly one of"},
		{"xlsx from content", map[string]any{"filename": "a.xlsx", "content": "x"}, "filename", ".txt, .md, .csv, .json, .docx"},
		{"zip from rows", withFilename("a.zip", tableArgs), "filename", ".xlsx, .csv, .json"},
		{"unknown extension", map[string]any{"filename": "a.exe", "content": "x"}, "filename", "content makes"},
		{"no name", map[string]any{"filename": "../", "content": "x"}, "filename", "no file name"},
		{"bad number", map[string]any{"filename": "a.csv", "columns": []any{map[string]any{"key": "n", "label": "N", "type": "number"}}, "rows": []any{[]any{"ten"}}}, "rows[0].n", "not a number"},
		{"number a double cannot hold", map[string]any{"filename": "a.csv", "columns": []any{map[string]any{"key": "n", "label": "N", "type": "number"}}, "rows": []any{[]any{json.Number("1.5")}, []any{json.Number("12345678901234567890")}}}, "rows[1].n", "12345678901234567890 has more digits than a number keeps"},
		{"number in text a double cannot hold", map[string]any{"filename": "a.xlsx", "columns": []any{map[string]any{"key": "n", "label": "N", "type": "number"}}, "rows": []any{[]any{"0.1"}, []any{"1.5"}, []any{"9007199254740993.5"}}}, "rows[2].n", "declare the column as text"},
		{"bad date", map[string]any{"filename": "a.csv", "columns": []any{map[string]any{"key": "d", "label": "D", "type": "date"}}, "rows": []any{[]any{"31/01/2024"}}}, "rows[0].d", "not a date"},
		{"too many values", map[string]any{"filename": "a.csv", "columns": []any{"a"}, "rows": []any{[]any{1, 2}}}, "rows[0]", "2 values; there are 1 columns"},
		{"unknown row key", map[string]any{"filename": "a.csv", "columns": []any{"a"}, "rows": []any{map[string]any{"b": 1}}}, "rows[0].b", "unknown column"},
		{"duplicate keys", map[string]any{"filename": "a.csv", "columns": []any{map[string]any{"key": "A", "label": "x"}, map[string]any{"key": "a", "label": "y"}}, "rows": []any{}}, "columns[1]", "used twice"},
		{"cell too long for xlsx", map[string]any{"filename": "a.xlsx", "columns": []any{"a"}, "rows": []any{[]any{strings.Repeat("x", 32768)}}}, "rows[0].a", "at most 32767"},
		{"rows without columns", map[string]any{"filename": "a.csv", "rows": []any{[]any{1}}}, "columns", "columns are needed"},
		{"bad column type", map[string]any{"filename": "a.csv", "columns": []any{map[string]any{"key": "a", "label": "A", "type": "money"}}, "rows": []any{}}, "columns[0].type", "allowed: auto, text, number"},
		{"missing source", map[string]any{"filename": "a.csv", "source_file_id": "f_aaaaaaaaaaaaaaaaaaaaaaaaaa"}, "source_file_id", "no table"},
		{"missing zip member", map[string]any{"filename": "a.zip", "file_ids": []any{"f_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}, "file_ids[0]", "no file"},
		{"invalid csv content", map[string]any{"filename": "a.csv", "content": "\x00\x01"}, "content", "binary"},
		{"invalid json content", map[string]any{"filename": "a.json", "content": "{nope"}, "content", "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, m := ts.Call(token, "files.create", tc.args)
			e, _ := m["error"].(map[string]any)
			if code/100 != 4 || e == nil {
				t.Fatalf("got %d %v, want a 4xx", code, m)
			}
			if e["field"] != tc.field || !strings.Contains(e["message"].(string), tc.says) {
				t.Errorf("got field %v message %q; want field %s saying %q", e["field"], e["message"], tc.field, tc.says)
			}
		})
	}
}

func TestCreateContentFormsAndZip(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	var ids []any
	for _, tc := range []struct{ name, content string }{
		{"notes.txt", "hello"}, {"notes.md", "# Title\n- a"}, {"data.csv", "id,v\n001,2\n"}, {"doc.docx", "# Heading\n- item"}, {"obj.json", `{"a": 1}`},
	} {
		code, m := ts.Call(token, "files.create", map[string]any{"filename": tc.name, "content": tc.content, "title": "T"})
		if code != 200 {
			t.Fatalf("%s: %d %v", tc.name, code, m)
		}
		f := fileOf(t, m)
		ids = append(ids, f["id"])
		if tc.name == "data.csv" && f["table_id"] == nil {
			t.Errorf("CSV content is not a table: %v", f)
		}
		if tc.name == "doc.docx" {
			_, body := ts.Get("", f["download_url"].(string))
			zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
			if err != nil {
				t.Fatalf("docx: %v", err)
			}
			if len(zr.File) != 6 {
				t.Errorf("docx parts: %d", len(zr.File))
			}
		}
	}
	ids = append(ids, ids[0]) // the same file twice gets a second name
	code, m := ts.Call(token, "files.create", map[string]any{"filename": "all.zip", "file_ids": ids})
	if code != 200 {
		t.Fatalf("zip: %d %v", code, m)
	}
	_, body := ts.Get("", fileOf(t, m)["download_url"].(string))
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "notes.txt,notes.md,data.csv,doc.docx,obj.json,notes (2).txt" {
		t.Errorf("zip entries %s", got)
	}
	// Another owner's id is not found.
	bob := apitest.AddUser(t, users, "bob", "analyst")
	if code, m := ts.Call(bob, "files.create", map[string]any{"filename": "x.zip", "file_ids": ids[:1]}); code != 404 {
		t.Errorf("bob zips ana's file: %d %v", code, m)
	}
}

// TestSourceFileConversions copies every kind of stored table into every
// table format without sending rows, and checks the values survive.
func TestSourceFileConversions(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	sources := map[string]string{}
	code, m := ts.Upload(token, "src.csv", []byte("id,amount,day\n00123,-1.50,2024-01-31\n12345678901234567890,2,2024-02-01\n"))
	if code != 201 {
		t.Fatalf("%d %v", code, m)
	}
	sources["csv"] = m["file"].(map[string]any)["id"].(string)
	for _, name := range []string{"src.xlsx", "src.json"} {
		code, m := ts.Call(token, "files.create", withFilename(name, tableArgs))
		if code != 200 {
			t.Fatalf("%s: %d %v", name, code, m)
		}
		sources[strings.TrimPrefix(filepath.Ext(name), ".")] = fileOf(t, m)["id"].(string)
	}
	corpus := filepath.Join("..", "ingest", "testdata", "sheetjs")
	for _, name := range []string{"RkNumber.xls", "NumberFormatCondition.xlsm"} {
		b, err := os.ReadFile(filepath.Join(corpus, name))
		if err != nil {
			t.Fatal(err)
		}
		code, m := ts.Upload(token, name, b)
		if code != 201 {
			t.Fatalf("%s: %d %v", name, code, m)
		}
		sources[strings.TrimPrefix(filepath.Ext(name), ".")] = m["file"].(map[string]any)["id"].(string)
	}
	for kind, id := range sources {
		_, sm, _ := ts.Do("GET", "/v1/files/"+id, token, nil, "")
		src := sm["file"].(map[string]any)
		for _, target := range []string{"xlsx", "csv", "json"} {
			t.Run(kind+"->"+target, func(t *testing.T) {
				code, m := ts.Call(token, "files.create", map[string]any{"filename": "copy." + target, "source_file_id": id})
				if code != 200 {
					t.Fatalf("got %d %v", code, m)
				}
				f := fileOf(t, m)
				if f["row_count"] != src["row_count"] || f["column_count"] != src["column_count"] {
					t.Errorf("counts %v/%v, source %v/%v", f["row_count"], f["column_count"], src["row_count"], src["column_count"])
				}
				// The copy's table answers like its source.
				a := map[string]any{"file_id": f["id"], "limit": 20}
				_, got := ts.Call(token, "files.query_table", a)
				a["file_id"] = id
				_, want := ts.Call(token, "files.query_table", a)
				if g, w := apitest.MustJSON(got["result"].(map[string]any)["rows"]), apitest.MustJSON(want["result"].(map[string]any)["rows"]); g != w {
					t.Errorf("rows differ:\n%s\n%s", g, w)
				}
				code, body := ts.Get("", f["download_url"].(string))
				if code != 200 || len(body) == 0 {
					t.Errorf("download %d", code)
				}
				if kind == "csv" && target == "csv" && !strings.Contains(string(body), "12345678901234567890,2.00,2024-02-01") {
					t.Errorf("csv copy: %s", body)
				}
			})
		}
	}
}

func TestSignedDownloads(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := &now
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 1 << 20, Now: func() time.Time { return *clock }}})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	_, m := ts.Upload(token, "a b ü.csv", []byte("x\n1\n"))
	link := m["file"].(map[string]any)["download_url"].(string)
	resp, err := http.Get(ts.URL + link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "x\n1\n" {
		t.Fatalf("signed link: %d %s", resp.StatusCode, body)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "filename*=utf-8''a%20b%20%C3%BC.csv") {
		t.Errorf("Content-Disposition %q", cd)
	}
	u, _ := url.Parse(link)
	tok, err := base64.RawURLEncoding.DecodeString(u.Query().Get(links.Param))
	if err != nil || len(tok) != 36 {
		t.Fatalf("link token %q", u.Query().Get(links.Param))
	}
	// The token is the owner's id bits, the expiry and the signature.
	tamper := func(at int, b ...byte) string {
		t2 := bytes.Clone(tok)
		copy(t2[at:], b)
		return u.Path + "?" + links.Param + "=" + base64.RawURLEncoding.EncodeToString(t2)
	}
	exp := binary.BigEndian.AppendUint32(nil, uint32(now.Add(time.Hour).Unix()))
	bob := apitest.AddUser(t, users, "bob", "analyst")
	_, bm := ts.Upload(bob, "b.csv", []byte("y\n2\n"))
	bobID := bm["file"].(map[string]any)["id"].(string)
	for name, p := range map[string]string{
		"signature":       tamper(35, tok[35]^1),
		"owner":           tamper(0, tok[0]^1),
		"expiry":          tamper(16, exp...),
		"other file":      strings.Replace(link, strings.Split(u.Path, "/")[3], bobID, 1),
		"malformed token": u.Path + "?" + links.Param + "=soon",
	} {
		if code, body := ts.Get("", p); code != 401 {
			t.Errorf("%s tampered: %d %s", name, code, body)
		}
	}
	*clock = now.Add(links.TTL + time.Second)
	if code, body := ts.Get("", link); code != 401 || !strings.Contains(string(body), "expired") {
		t.Errorf("expired: %d %s", code, body)
	}
}

func TestFilesReadSessions(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	for _, session := range []string{"s1", "s1", "s2"} {
		body, _ := json.Marshal(map[string]any{"arguments": map[string]any{"filename": session + ".txt", "content": "x"}})
		req, _ := http.NewRequest("POST", ts.URL+"/v1/tools/files.create", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Chat-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("create: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	list := func(session string, args map[string]any) []any {
		body, _ := json.Marshal(map[string]any{"arguments": args})
		req, _ := http.NewRequest("POST", ts.URL+"/v1/tools/files.read", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Chat-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return m["result"].(map[string]any)["files"].([]any)
	}
	if n := len(list("s1", map[string]any{})); n != 2 {
		t.Errorf("session s1: %d files, want 2", n)
	}
	if n := len(list("s1", map[string]any{"session_only": false})); n != 3 {
		t.Errorf("all: %d files, want 3", n)
	}
	if got := list("s2", map[string]any{"session_only": false, "limit": 1}); len(got) != 1 || got[0].(map[string]any)["filename"] != "s2.txt" {
		t.Errorf("newest first with limit 1: %v", got)
	}
}

func TestExportEndpoint(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	_, m, _ := ts.Do("GET", "/v1/files/"+fileID, token, nil, "")
	tid := m["file"].(map[string]any)["table_id"].(string)
	code, body := ts.Get(token, "/v1/tables/"+tid+"/export?format=xlsx")
	if code != 200 {
		t.Fatalf("xlsx: %d", code)
	}
	x, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := x.GetRows(x.GetSheetList()[0])
	if len(rows) != 5 || rows[1][0] != "000123" || rows[2][0] != "123" {
		t.Errorf("xlsx rows %q", rows)
	}
	code, body = ts.Get(token, "/v1/tables/"+tid+"/export?format=csv&bom=true")
	if code != 200 || !bytes.HasPrefix(body, []byte("\xEF\xBB\xBForder_id,region")) {
		t.Errorf("csv: %d %q", code, body)
	}
	code, body = ts.Get(token, "/v1/tables/"+tid+"/export?format=json")
	if code != 200 || !strings.Contains(string(body), `["000123","North",10.50,"2024-01-02"]`) {
		t.Errorf("json: %d %s", code, body)
	}
	if code, _ := ts.Get(token, "/v1/tables/"+tid+"/export?format=pdf"); code != 400 {
		t.Errorf("pdf: %d", code)
	}
}

func TestFilesReadPhotoPreview(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 32)...)
	_, m := ts.Upload(token, "cat.png", png)
	id := m["file"].(map[string]any)["id"].(string)
	code, m := ts.Call(token, "files.read", map[string]any{"file_id": id})
	p := fileOf(t, m)["preview"].(map[string]any)
	if code != 200 || p["type"] != "image" || p["content_type"] != "image/png" || !strings.Contains(p["url"].(string), "?"+links.Param+"=") {
		t.Errorf("got %d %v", code, p)
	}
	bob := apitest.AddUser(t, users, "bob", "analyst")
	if code, m := ts.Call(bob, "files.read", map[string]any{"file_id": id}); code != 404 {
		t.Errorf("bob reads ana's photo: %d %v", code, m)
	}
}
