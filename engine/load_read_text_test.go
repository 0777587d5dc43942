package engine

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// csvSourceOf reads a CSV file for both paths: the row stream (Go) and the
// file itself (DuckDB's reader).
func csvSourceOf(t *testing.T, path string, viaSQL bool) TableSource {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header, err := csv.NewReader(f).Read()
	if err != nil {
		t.Fatal(err)
	}
	src := TableSource{Name: "t", Header: header, Rows: func(yield func([]string) error) (RowStats, error) {
		f, err := os.Open(path)
		if err != nil {
			return RowStats{}, err
		}
		defer f.Close()
		r := csv.NewReader(f)
		r.FieldsPerRecord = -1
		if _, err := r.Read(); err != nil {
			return RowStats{}, err
		}
		for {
			rec, err := r.Read()
			if err != nil {
				return RowStats{}, nil
			}
			if err := yield(rec); err != nil {
				return RowStats{}, err
			}
		}
	}}
	if viaSQL {
		// No row stream: the file must be read by DuckDB alone.
		src.CSV, src.Rows = &CSVFile{Path: path, Delimiter: ','}, nil
	}
	return src
}

// sameDecisionFiles are CSV files both paths read: the S&P 500 file and
// one made of every shape the classifiers know.
func sameDecisionFiles(t *testing.T) map[string]string {
	sp, err := os.ReadFile(filepath.Join("testdata", "sp500-financials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	var header []string
	longest := 0
	for i, g := range shapeValues {
		header = append(header, fmt.Sprintf("shape_%d", i))
		longest = max(longest, len(g))
	}
	// Each shape group also alone in a column of its own, value by value,
	// so that mixed columns and pure ones both occur.
	for i, g := range shapeValues {
		for j := range g {
			header = append(header, fmt.Sprintf("v_%d_%d", i, j))
		}
	}
	w.Write(header)
	for r := 0; r < longest; r++ {
		var row []string
		for _, g := range shapeValues {
			row = append(row, g[r%len(g)])
		}
		for _, g := range shapeValues {
			row = append(row, g...)
		}
		w.Write(row)
	}
	w.Flush()
	return map[string]string{"sp500.csv": string(sp), "shapes.csv": b.String(),
		"crlf and bom.csv":   "\uFEFFa,b\r\n1,x\r\n2,y\r\n",
		"quoted fields.csv":  "a,b\n\"1,5\",\"line1\nline \"\"2\"\"\"\n\"\",\" padded \"\n",
		"header only.csv":    "a,b\n",
		"blank lines.csv":    "a,b\n1,2\n\n3,4\n",
		"last line open.csv": "a,b\n1,2\n3,4",
		"forms.csv": "amount,price,share,day,at,zip,qty,note\n" +
			"\"1,234.56\",$12.50,12.5%,3/14/2025,2024-03-01T10:00:00.123Z,09645,1,x\n" +
			"12.50,\"$1,000\",-3%,12/1/2025,2024-03-01 10:00:00+02:00,10001,2,\n" +
			"\"(45.00)\",($3.50),0%,1/31/2025,2024-03-01 10:00:00-0530,00501,3,\"\"\n"}
}

// TestSameDecisionsBothPaths stores each file through the Go row stream
// and through read_csv with the SQL pass: every column gets the same type,
// identifier mark and reason, and every value the same stored form.
func TestSameDecisionsBothPaths(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	for name, content := range sameDecisionFiles(t) {
		t.Run(name, func(t *testing.T) {
			var got [2]*catalog.Table
			var rows [2]*catalog.Page
			for i, viaSQL := range []bool{false, true} {
				path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				f, err := s.AddFile(ctx, NewFile{Filename: name, TempPath: path, Tables: []TableSource{csvSourceOf(t, path, viaSQL)}})
				if err != nil {
					t.Fatalf("via SQL %v: %v", viaSQL, err)
				}
				got[i] = &f.Tables[0]
				if rows[i], err = s.Rows(ctx, got[i].ID, catalog.PageRequest{Limit: catalog.MaxPageSize}); err != nil {
					t.Fatal(err)
				}
			}
			if g, w := fmt.Sprint(got[1].Columns), fmt.Sprint(got[0].Columns); g != w {
				for j := range got[0].Columns {
					if a, b := got[1].Columns[j], got[0].Columns[j]; a != b {
						t.Errorf("column %s: SQL %s %v %q, Go %s %v %q", b.Key, a.Type, a.Identifier, a.Reason, b.Type, b.Identifier, b.Reason)
					}
				}
			}
			if g, w := fmt.Sprint(rows[1].Rows), fmt.Sprint(rows[0].Rows); g != w {
				t.Errorf("rows differ:\nSQL %.400s\nGo  %.400s", g, w)
			}
			if got[1].RowCount != got[0].RowCount {
				t.Errorf("rows: SQL %d, Go %d", got[1].RowCount, got[0].RowCount)
			}
		})
	}
}

// TestOwnerReadsOwnIncomingOnly proves what SQL can reach now that every
// owner's database is attached to one DuckDB instance. The instance itself
// refuses any file outside the owners' folder (the data directory's own
// files, /etc/passwd, a climb out with ..), attaching one, extensions, and
// loosening its settings. Inside the owners' folder the engine is the
// boundary: a store's readers of uploads take paths inside its own incoming
// directory only, and anything else goes through Go, which is handed the
// upload itself (TestStoreReadersStayInIncoming; the API's argument paths
// in api/owners_test.go).
func TestOwnerReadsOwnIncomingOnly(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	a := acquire(t, e, datadesk.NewID("u"))
	write := func(dir, name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x\n1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := write(a.IncomingDir(), "own.csv")
	root := filepath.Dir(filepath.Dir(filepath.Dir(a.IncomingDir())))
	dataFile := write(root, "users.csv")
	outside := filepath.Join(t.TempDir(), "elsewhere.duckdb")
	var n int
	if err := a.db.QueryRowContext(ctx, `SELECT count(*) FROM read_csv(`+ducksql.Literal(own)+`)`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("own incoming file: %d %v", n, err)
	}
	for name, stmt := range map[string]string{
		"/etc/passwd":              `SELECT count(*) FROM read_csv('/etc/passwd')`,
		"the data directory":       `SELECT count(*) FROM read_csv(` + ducksql.Literal(dataFile) + `)`,
		"climbing out with ..":     `SELECT count(*) FROM read_csv(` + ducksql.Literal(filepath.Join(a.IncomingDir(), "..", "..", "..", "users.csv")) + `)`,
		"a glob over the data dir": `SELECT count(*) FROM read_csv(` + ducksql.Literal(filepath.Join(root, "*.csv")) + `)`,
		"the server's database":    `SELECT count(*) FROM read_blob(` + ducksql.Literal(filepath.Join(root, "system.duckdb")) + `)`,
		"attach a file outside":    `ATTACH ` + ducksql.Literal(outside) + ` AS stolen`,
		"loosen the directories":   `SET allowed_directories = ['/']`,
		"turn access back on":      `SET enable_external_access = true`,
		"load an extension":        `LOAD httpfs`,
		"install an extension":     `INSTALL httpfs`,
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := a.db.QueryContext(ctx, stmt)
			if err == nil {
				rows.Close()
				t.Fatalf("%s ran", stmt)
			}
		})
	}
}

// TestStoreReadersStayInIncoming: the statements a store builds to read an
// upload name a file of its own incoming directory or none at all: another
// owner's upload, the store's stored bytes or database, and a climb out
// with .. are declined (and the file is read through Go, from the upload
// ingest was handed).
func TestStoreReadersStayInIncoming(t *testing.T) {
	e := newEngine(t)
	a, b := acquire(t, e, datadesk.NewID("u")), acquire(t, e, datadesk.NewID("u"))
	own := filepath.Join(a.IncomingDir(), "own.csv")
	for name, path := range map[string]string{
		"another owner's upload": filepath.Join(b.IncomingDir(), "other.csv"),
		"another owner's store":  filepath.Join(filepath.Dir(b.IncomingDir()), "owner.duckdb"),
		"own stored bytes":       a.BytesPath("f_x"),
		"own database":           filepath.Join(filepath.Dir(a.IncomingDir()), "owner.duckdb"),
		"climbing out with ..":   filepath.Join(a.IncomingDir(), "..", "..", filepath.Base(filepath.Dir(b.IncomingDir())), "incoming", "other.csv"),
		"the incoming folder":    a.IncomingDir(),
	} {
		t.Run(name, func(t *testing.T) {
			csv := TableSource{Header: []string{"x"}, CSV: &CSVFile{Path: path, Delimiter: ','}}
			if stmt, ok := a.csvRead(csv, "", "", 0); ok {
				t.Errorf("read_csv of %s: %s", path, stmt)
			}
			js := TableSource{Header: []string{"x"}, JSON: &JSONFile{Path: path, Keys: []string{"x"}}}
			if stmt, ok := a.jsonRead(js); ok {
				t.Errorf("read_json of %s: %s", path, stmt)
			}
		})
	}
	if _, ok := a.csvRead(TableSource{Header: []string{"x"}, CSV: &CSVFile{Path: own, Delimiter: ','}}, "", "", 0); !ok {
		t.Errorf("read_csv of the store's own upload declined")
	}
}

// TestCSVRejectsReported: a row DuckDB's strict reader cannot read is left
// out and reported with its line; the other rows are stored.
func TestCSVRejectsReported(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	path := filepath.Join(s.IncomingDir(), "bad.csv")
	if err := os.WriteFile(path, []byte("a,b\n1,2\n3,\"x\"y\n5,6\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "bad.csv", TempPath: path, Tables: []TableSource{csvSourceOf(t, path, true)}})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Tables[0].Report
	if r.RowsStored != 2 || r.RowsRejected != 1 || len(r.Rejects) != 1 || r.Rejects[0].Line != 3 {
		t.Errorf("got %d stored, %d rejected %+v, want 2, 1 at line 3", r.RowsStored, r.RowsRejected, r.Rejects)
	}
}

// jsonSourceOf turns a CSV file into NDJSON records of strings (an empty
// field becomes null, except in the last column, where it stays "") and
// reads it for both paths: the row stream with null marks (Go) and the
// file itself (DuckDB's read_json).
func jsonSourceOf(t *testing.T, dir, content string, viaSQL bool) (TableSource, bool) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(content, "\uFEFF")))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) < 2 {
		return TableSource{}, false
	}
	header := recs[0]
	seen := map[string]bool{}
	for _, h := range header {
		if seen[strings.ToLower(h)] {
			return TableSource{}, false
		}
		seen[strings.ToLower(h)] = true
	}
	var b strings.Builder
	var rows [][]string
	var nulls [][]bool
	for _, rec := range recs[1:] {
		if len(rec) != len(header) {
			return TableSource{}, false
		}
		row, null := make([]string, len(header)), make([]bool, len(header))
		b.WriteString("{")
		for i, v := range rec {
			if i > 0 {
				b.WriteString(", ")
			}
			k, _ := json.Marshal(header[i])
			b.Write(k)
			b.WriteString(": ")
			if v == "" && i < len(rec)-1 {
				b.WriteString("null")
				null[i] = true
				continue
			}
			q, _ := json.Marshal(v)
			b.Write(q)
			row[i] = v
		}
		b.WriteString("}\n")
		rows, nulls = append(rows, row), append(nulls, null)
	}
	path := filepath.Join(dir, datadesk.NewID("up"))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	src := TableSource{Name: "t", Header: header, RowsWithNulls: func(yield func([]string, []bool) error) (RowStats, error) {
		for i := range rows {
			if err := yield(rows[i], nulls[i]); err != nil {
				return RowStats{}, err
			}
		}
		return RowStats{}, nil
	}}
	if viaSQL {
		// No row stream: the file must be read by DuckDB alone.
		src.JSON, src.RowsWithNulls = &JSONFile{Path: path, Lines: true, Keys: header, MaxRecord: b.Len()}, nil
	}
	return src, true
}

// TestSameDecisionsBothPathsJSON stores the same files as records of
// strings through the Go row stream and through read_json with the SQL
// pass: the same types, identifier marks, reasons and stored values, with
// null and "" kept apart on both.
func TestSameDecisionsBothPathsJSON(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	for name, content := range sameDecisionFiles(t) {
		if _, ok := jsonSourceOf(t, t.TempDir(), content, false); !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var got [2]*catalog.Table
			var rows [2]*catalog.Page
			for i, viaSQL := range []bool{false, true} {
				src, _ := jsonSourceOf(t, s.IncomingDir(), content, viaSQL)
				path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				f, err := s.AddFile(ctx, NewFile{Filename: "t.json", TempPath: path, Tables: []TableSource{src}})
				if err != nil {
					t.Fatalf("via SQL %v: %v", viaSQL, err)
				}
				got[i] = &f.Tables[0]
				if rows[i], err = s.Rows(ctx, got[i].ID, catalog.PageRequest{Limit: catalog.MaxPageSize}); err != nil {
					t.Fatal(err)
				}
			}
			for j := range got[0].Columns {
				if a, b := got[1].Columns[j], got[0].Columns[j]; a != b {
					t.Errorf("column %s: SQL %s %v %q, Go %s %v %q", b.Key, a.Type, a.Identifier, a.Reason, b.Type, b.Identifier, b.Reason)
				}
			}
			if g, w := fmt.Sprintf("%#v", rows[1].Rows), fmt.Sprintf("%#v", rows[0].Rows); g != w {
				t.Errorf("rows differ:\nSQL %.400s\nGo  %.400s", g, w)
			}
		})
	}
}

// TestRefusedCSVReadByGo: DuckDB's strict CSV parser gives up on some
// files people make (lines ending two ways, a carriage return alone in a
// field), and its error aborted the load's transaction: the upload
// failed with the reader's message. The file is now read again by Go's
// reader, in a new transaction, to the same table the Go path makes.
func TestRefusedCSVReadByGo(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	for name, content := range map[string]string{
		"lines ending two ways":        "id,name\r\n1,a\r\n2,b\n3,c\n",
		"a carriage return in a field": "id,name\n1,ab\rc\n2,x\n",
	} {
		t.Run(name, func(t *testing.T) {
			var rows [2]string
			for i, direct := range []bool{false, true} {
				path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				src := csvSourceOf(t, path, false)
				if direct {
					src.CSV = &CSVFile{Path: path, Delimiter: ','}
				}
				f, err := s.AddFile(ctx, NewFile{Filename: "f.csv", TempPath: path, Tables: []TableSource{src}})
				if err != nil {
					t.Fatalf("direct %v: %v", direct, err)
				}
				p, err := s.Rows(ctx, f.Tables[0].ID, catalog.PageRequest{Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				rows[i] = fmt.Sprint(f.Tables[0].RowCount, p.Rows)
			}
			if rows[1] != rows[0] {
				t.Errorf("read after the refusal %s, by Go alone %s", rows[1], rows[0])
			}
		})
	}
}
