package exports

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"datadesk/internal/testenv"
)

// docRun is a run of text as Word shows it.
type docRun struct {
	Text                             string
	Bold, Italic, Strike, Code, Link bool
}

// docPara is a paragraph: its style, list level and numbering, and runs.
type docPara struct {
	Style       string
	NumID, Ilvl string
	Runs        []docRun
	// LinkIDs are the relationship ids of its hyperlinks.
	LinkIDs []string
}

func (p docPara) text() string {
	var b strings.Builder
	for _, r := range p.Runs {
		b.WriteString(r.Text)
	}
	return b.String()
}

// docBody is a document read back: top-level paragraphs and tables, in
// order, and each table as rows of cell texts.
type docBody struct {
	Paras  []docPara
	Tables [][][]string
}

// readDocument reads word/document.xml into paragraphs and tables.
func readDocument(t *testing.T, doc string) docBody {
	t.Helper()
	var out docBody
	d := xml.NewDecoder(strings.NewReader(doc))
	var (
		para              *docPara
		run               *docRun
		inLink            bool
		linkID            string
		table             [][]string
		cell              *strings.Builder
		depth             int // table nesting
		inText, inRunProp bool
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("document.xml: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range e.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch e.Name.Local {
			case "tbl":
				depth++
				table = nil
			case "tr":
				table = append(table, nil)
			case "tc":
				cell = &strings.Builder{}
			case "p":
				if depth == 0 {
					para = &docPara{}
				}
			case "pStyle":
				if para != nil {
					para.Style = attr("val")
				}
			case "numId":
				if para != nil {
					para.NumID = attr("val")
				}
			case "ilvl":
				if para != nil {
					para.Ilvl = attr("val")
				}
			case "hyperlink":
				inLink, linkID = true, attr("id")
				if para != nil {
					para.LinkIDs = append(para.LinkIDs, linkID)
				}
			case "r":
				run = &docRun{Link: inLink}
			case "rPr":
				inRunProp = true
			case "b":
				if run != nil && inRunProp {
					run.Bold = true
				}
			case "i":
				if run != nil && inRunProp {
					run.Italic = true
				}
			case "strike":
				if run != nil && inRunProp {
					run.Strike = true
				}
			case "rStyle":
				if run != nil && attr("val") == "CodeChar" {
					run.Code = true
				}
			case "t":
				inText = true
			case "br":
				if run != nil {
					run.Text += "\n"
				}
			}
		case xml.CharData:
			if inText && run != nil {
				run.Text += string(e)
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "t":
				inText = false
			case "rPr":
				inRunProp = false
			case "hyperlink":
				inLink = false
			case "r":
				if run != nil {
					if depth > 0 && cell != nil {
						cell.WriteString(run.Text)
					} else if para != nil {
						para.Runs = append(para.Runs, *run)
					}
				}
				run = nil
			case "tc":
				table[len(table)-1] = append(table[len(table)-1], cell.String())
				cell = nil
			case "tbl":
				depth--
				out.Tables = append(out.Tables, table)
			case "p":
				if depth == 0 && para != nil {
					out.Paras = append(out.Paras, *para)
					para = nil
				}
			}
		}
	}
	return out
}

// docxParts unzips a document into its parts, checking each is well-formed.
func docxParts(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]string{}
	for _, f := range zr.File {
		r, _ := f.Open()
		body, _ := io.ReadAll(r)
		r.Close()
		parts[f.Name] = string(body)
		d := xml.NewDecoder(bytes.NewReader(body))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s: %v", f.Name, err)
				break
			}
		}
	}
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml", "word/styles.xml", "word/numbering.xml", "word/_rels/document.xml.rels"} {
		if _, ok := parts[name]; !ok {
			t.Errorf("missing part %s", name)
		}
	}
	return parts
}

const docxMarkdown = "# Summary\n" +
	"Sales grew **a lot**, *mostly* in the ~~south~~ north; see [the report](https://example.com/r?a=1&b=2) or <https://example.org>.\n" +
	"Run `make test` first.\n" +
	"\n" +
	"- first & <b>\n" +
	"  - nested bullet\n" +
	"    1. deep number\n" +
	"- second\n" +
	"\n" +
	"3. three\n" +
	"4. four\n" +
	"   - bullet under four\n" +
	"\n" +
	"## Figures\n" +
	"| Region | Sales | Note |\n" +
	"|:-------|------:|:----:|\n" +
	"| North  | 1,200 | **up** |\n" +
	"| South  | 900   |\n" +
	"\n" +
	"```go\n" +
	"func main() {\n" +
	"\tfmt.Println(\"<hi>\")\n" +
	"}\n" +
	"```\n" +
	"\n" +
	"> quoted *words*\n" +
	"\n" +
	"[bad link](javascript:alert(1)) and text\x07 with bell\n"

// TestDOCXFromMarkdown opens the parts and reads them back: formatting as
// runs, links as hyperlink relationships, nested lists with levels and
// their own numbering, code, and tables as Word tables.
func TestDOCXFromMarkdown(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteDOCX(&b, "Report", docxMarkdown); err != nil {
		t.Fatal(err)
	}
	parts := docxParts(t, b.Bytes())
	doc := readDocument(t, parts["word/document.xml"])
	if strings.Contains(parts["word/document.xml"], "**") || strings.Contains(parts["word/document.xml"], "~~") {
		t.Errorf("Markdown marks left in the text")
	}
	byText := map[string]docPara{}
	for _, p := range doc.Paras {
		byText[p.text()] = p
	}
	para := func(text string) docPara {
		t.Helper()
		p, ok := byText[text]
		if !ok {
			var all []string
			for _, p := range doc.Paras {
				all = append(all, p.text())
			}
			t.Fatalf("no paragraph %q among %q", text, all)
		}
		return p
	}
	if p := para("Report"); p.Style != "Title" {
		t.Errorf("title style %q", p.Style)
	}
	if p := para("Summary"); p.Style != "Heading1" {
		t.Errorf("heading style %q", p.Style)
	}
	intro := para("Sales grew a lot, mostly in the south north; see the report or https://example.org. Run make test first.")
	want := map[string]docRun{
		"a lot": {Text: "a lot", Bold: true}, "mostly": {Text: "mostly", Italic: true}, "south": {Text: "south", Strike: true},
		"the report": {Text: "the report", Link: true}, "https://example.org": {Text: "https://example.org", Link: true},
		"make test": {Text: "make test", Code: true},
	}
	for _, r := range intro.Runs {
		if w, ok := want[r.Text]; ok {
			if r != w {
				t.Errorf("run %q: got %+v, want %+v", r.Text, r, w)
			}
			delete(want, r.Text)
		}
	}
	if len(want) != 0 {
		t.Errorf("runs not found: %v", want)
	}
	rels := parts["word/_rels/document.xml.rels"]
	if len(intro.LinkIDs) != 2 {
		t.Fatalf("hyperlinks %v", intro.LinkIDs)
	}
	for id, target := range map[string]string{intro.LinkIDs[0]: "https://example.com/r?a=1&amp;b=2", intro.LinkIDs[1]: "https://example.org"} {
		if !strings.Contains(rels, `Id="`+id+`" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="`+target+`" TargetMode="External"`) {
			t.Errorf("no external relationship %s to %s in %s", id, target, rels)
		}
	}
	if strings.Contains(rels, "javascript") {
		t.Errorf("a javascript: link became a relationship")
	}
	if p := para("bad link and text with bell"); len(p.LinkIDs) != 0 {
		t.Errorf("javascript: link kept as a hyperlink")
	}
	// Lists: levels nest, and each numbered list has its own numbering.
	for text, w := range map[string][2]string{
		"first & <b>": {"", "0"}, "nested bullet": {"", "1"}, "deep number": {"", "2"}, "second": {"", "0"},
		"three": {"", "0"}, "four": {"", "0"}, "bullet under four": {"", "1"},
	} {
		p := para(text)
		if p.Ilvl != w[1] || p.NumID == "" {
			t.Errorf("%q: level %q numbering %q, want level %s", text, p.Ilvl, p.NumID, w[1])
		}
	}
	num := parts["word/numbering.xml"]
	numOf := func(text string) string { return para(text).NumID }
	if numOf("first & <b>") != numOf("second") || numOf("three") != numOf("four") || numOf("first & <b>") == numOf("three") || numOf("deep number") == numOf("three") {
		t.Errorf("numbering instances: %s %s %s %s", numOf("first & <b>"), numOf("second"), numOf("three"), numOf("deep number"))
	}
	if !strings.Contains(num, `<w:num w:numId="`+numOf("three")+`"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="3"/>`) {
		t.Errorf("the list starting at 3 does not start at 3: %s", num)
	}
	if !strings.Contains(num, `<w:lvl w:ilvl="2">`) || !strings.Contains(num, `w:numFmt w:val="bullet"`) || !strings.Contains(num, `w:numFmt w:val="decimal"`) {
		t.Errorf("numbering lacks levels: %s", num)
	}
	// Code keeps its lines; quotes and tables are what they are.
	if p := para("func main() {\n\tfmt.Println(\"<hi>\")\n}"); p.Style != "Code" {
		t.Errorf("code style %q", p.Style)
	}
	if p := para("quoted words"); p.Style != "Quote" {
		t.Errorf("quote style %q", p.Style)
	}
	if len(doc.Tables) != 1 {
		t.Fatalf("%d tables, want 1", len(doc.Tables))
	}
	if got, want := fmt.Sprint(doc.Tables[0]), "[[Region Sales Note] [North 1,200 up] [South 900 ]]"; got != want {
		t.Errorf("table %s, want %s", got, want)
	}
	if !strings.Contains(parts["word/document.xml"], `<w:jc w:val="right"/>`) || !strings.Contains(parts["word/document.xml"], `<w:tblHeader/>`) {
		t.Errorf("table alignment or header row lost")
	}
	if strings.Contains(parts["word/document.xml"], "|") {
		t.Errorf("table pipes left in the text")
	}

	t.Run("LibreOffice converts it", func(t *testing.T) {
		soffice := ""
		for _, name := range []string{"soffice", "libreoffice"} {
			if p, err := exec.LookPath(name); err == nil {
				soffice = p
				break
			}
		}
		if soffice == "" {
			testenv.Missing(t, "LibreOffice (soffice) is not installed")
		}
		dir := t.TempDir()
		in := filepath.Join(dir, "report.docx")
		if err := os.WriteFile(in, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(soffice, "--headless", "--norestore", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"),
			"--convert-to", "pdf", "--outdir", dir, in)
		timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		out, err := cmd.CombinedOutput()
		timer.Stop()
		if err != nil {
			t.Fatalf("soffice: %v\n%s", err, out)
		}
		pdf, err := os.ReadFile(filepath.Join(dir, "report.pdf"))
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF")) || len(pdf) < 1000 {
			t.Fatalf("no PDF (%v): %s", err, out)
		}
	})
}
