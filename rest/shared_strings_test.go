package rest_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk/api/apitest"
)

// stringsBook is an XLSX whose shared strings part holds n strings of size
// bytes each, of which its one sheet uses the first used; it is padded
// with random bytes, so that it expands less than the zip-bomb ratio
// allows, as a hostile workbook is.
func stringsBook(t *testing.T, n, size, used int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	part := func(name, body string) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	part("[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`)
	part("_rels/.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)
	part("xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="data" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	part("xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`)
	var sheet strings.Builder
	sheet.WriteString(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>name</t></is></c></row>`)
	for i := range used {
		fmt.Fprintf(&sheet, `<row r="%d"><c r="A%d"><v>%d</v></c><c r="B%d" t="s"><v>%d</v></c></row>`, i+2, i+2, i, i+2, i)
	}
	sheet.WriteString(`</sheetData></worksheet>`)
	part("xl/worksheets/sheet1.xml", sheet.String())
	w, err := zw.Create("xl/sharedStrings.xml")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="%d" uniqueCount="%d">`, n, n)
	text := strings.Repeat("x", size)
	for i := range n {
		fmt.Fprintf(w, "<si><t>%07d%s</t></si>", i, text[7:])
	}
	io.WriteString(w, "</sst>")
	// Random bytes, stored: the archive's size, against which its
	// expansion is measured.
	pad, err := zw.CreateHeader(&zip.FileHeader{Name: "xl/media/pad.bin", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	io.CopyN(pad, rand.Reader, int64(n)*int64(size)/150)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSharedStringsBounded: a 10.7 MB workbook whose shared strings part
// held 900,000 padded strings, of which its sheet used 20,000, took a node
// from 67 to 1,209 MB, and three at once to 3,552 MB on a node limited to
// 1 GB: the shared strings were held whole, however large. They are now
// counted as they are read against the memory the node gives uploads'
// readers (ingest.DefaultMaxReadMemory, an eighth of --memory-limit),
// shared by every upload at once: a workbook whose strings pass it is
// refused (413) when they do, and three workbooks at the limit take their
// turns within it.
func TestSharedStringsBounded(t *testing.T) {
	// Not parallel: it measures the process's memory, which other tests would add to.
	ts := apitest.New(t, apitest.Options{MaxUpload: 64 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	// The readers' memory (ingest.DefaultMaxReadMemory), and what a load
	// costs beside its strings: its rows on their way and DuckDB's load of
	// them.
	const budget = 128 << 20
	const allowance = 128 << 20

	hostile := stringsBook(t, 200_000, 1000, 20_000)
	var code int
	var m map[string]any
	start := time.Now()
	rss, _ := apitest.MemoryPeaks(t, func() { code, m = ts.Upload(ana, "hostile.xlsx", hostile) })
	took := time.Since(start)
	t.Logf("a %d KiB workbook of 200 MB of shared strings: %d in %v, the process grew %d MiB", len(hostile)>>10, code, took, rss>>20)
	if code != http.StatusRequestEntityTooLarge || apitest.ErrCode(m) != "too_large" {
		t.Errorf("got %d %v, want 413 too_large", code, m)
	}
	if rss > budget {
		t.Errorf("the process grew %d MiB, past the readers' %d MiB", rss>>20, budget>>20)
	}
	if took > 5*time.Second {
		t.Errorf("refusing it took %v", took)
	}

	// Three workbooks whose strings are each at the limit (127 MB of its
	// 134), at once.
	atLimit := stringsBook(t, 125_000, 1000, 5_000)
	codes := make([]int, 3)
	start = time.Now()
	rss, _ = apitest.MemoryPeaks(t, func() {
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				var b bytes.Buffer
				codes[i], _ = ts.UploadWith(ana, "limit.xlsx", atLimit, "", &b)
			})
		}
		wg.Wait()
	})
	took = time.Since(start)
	t.Logf("three workbooks of 127 MB of shared strings at once: %v in %v, the process grew %d MiB", codes, took, rss>>20)
	for i, code := range codes {
		if code != http.StatusCreated {
			t.Errorf("workbook %d at the limit: %d", i, code)
		}
	}
	if rss > budget+allowance {
		t.Errorf("the process grew %d MiB, past the readers' %d MiB and an allowance of %d MiB", rss>>20, budget>>20, allowance>>20)
	}
	if took > 10*time.Second {
		t.Errorf("three workbooks at the limit took %v", took)
	}
}
