package exports

import (
	"archive/zip"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// The fixed parts of a WordprocessingML package that Word and LibreOffice
// open: content types, the package relationship, and styles for headings,
// lists, code, quotes, links and tables.
const (
	docxContentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>`
	docxRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`
	docxStyles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
		`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:pPr><w:spacing w:after="120"/></w:pPr><w:rPr><w:sz w:val="22"/></w:rPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="240"/></w:pPr><w:rPr><w:b/><w:sz w:val="40"/></w:rPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:pPr><w:keepNext/><w:spacing w:before="240"/><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:pPr><w:keepNext/><w:spacing w:before="200"/><w:outlineLvl w:val="1"/></w:pPr><w:rPr><w:b/><w:sz w:val="28"/></w:rPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Heading3"><w:name w:val="heading 3"/><w:basedOn w:val="Normal"/><w:pPr><w:keepNext/><w:spacing w:before="160"/><w:outlineLvl w:val="2"/></w:pPr><w:rPr><w:b/><w:sz w:val="24"/></w:rPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="40"/></w:pPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Code"><w:name w:val="Code"/><w:basedOn w:val="Normal"/><w:pPr><w:shd w:val="clear" w:color="auto" w:fill="F3F4F6"/><w:spacing w:after="120"/><w:ind w:left="284"/></w:pPr><w:rPr><w:rFonts w:ascii="Courier New" w:hAnsi="Courier New" w:cs="Courier New"/><w:sz w:val="20"/></w:rPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="567"/><w:pBdr><w:left w:val="single" w:sz="12" w:space="8" w:color="A0A7B4"/></w:pBdr></w:pPr><w:rPr><w:i/></w:rPr></w:style>` +
		`<w:style w:type="character" w:styleId="CodeChar"><w:name w:val="Code Char"/><w:rPr><w:rFonts w:ascii="Courier New" w:hAnsi="Courier New" w:cs="Courier New"/><w:shd w:val="clear" w:color="auto" w:fill="F3F4F6"/></w:rPr></w:style>` +
		`<w:style w:type="character" w:styleId="Hyperlink"><w:name w:val="Hyperlink"/><w:rPr><w:color w:val="0563C1"/><w:u w:val="single"/></w:rPr></w:style>` +
		`<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4" w:space="0" w:color="8C959F"/><w:left w:val="single" w:sz="4" w:space="0" w:color="8C959F"/><w:bottom w:val="single" w:sz="4" w:space="0" w:color="8C959F"/><w:right w:val="single" w:sz="4" w:space="0" w:color="8C959F"/><w:insideH w:val="single" w:sz="4" w:space="0" w:color="8C959F"/><w:insideV w:val="single" w:sz="4" w:space="0" w:color="8C959F"/></w:tblBorders><w:tblCellMar><w:left w:w="108" w:type="dxa"/><w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>` +
		`</w:styles>`
	wNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	// maxListLevel is the deepest list level Word numbers (0 to 8).
	maxListLevel = 8
)

// markdown parses CommonMark with GitHub's tables and strikethrough.
var markdown = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))

// WriteDOCX writes a Word document from Markdown: headings, paragraphs
// with bold, italic, strikethrough, code spans and links (as hyperlinks),
// bullet and numbered lists nested to any depth Word has, code blocks,
// quotes, rules and tables (as Word tables). A title, if given, comes
// first. Raw HTML is kept as text; images are named by their alt text.
func WriteDOCX(w io.Writer, title, content string) error {
	src := []byte(xmlSafe(strings.ReplaceAll(content, "\r\n", "\n")))
	d := &docx{src: src}
	if title != "" {
		d.body.WriteString(`<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr>`)
		d.run(title, runFormat{})
		d.body.WriteString(`</w:p>`)
	}
	root := markdown.Parser().Parse(text.NewReader(src))
	d.blocks(root, 0)
	doc := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document ` + wNS + `><w:body>` + d.body.String() +
		`<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`
	zw := zip.NewWriter(w)
	for _, part := range []struct{ name, body string }{
		{"[Content_Types].xml", docxContentTypes},
		{"_rels/.rels", docxRels},
		{"word/_rels/document.xml.rels", d.rels()},
		{"word/styles.xml", docxStyles},
		{"word/numbering.xml", d.numbering()},
		{"word/document.xml", doc},
	} {
		pw, err := zw.Create(part.name)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(pw, part.body); err != nil {
			return err
		}
	}
	return zw.Close()
}

// docx collects a document's body, its links and its lists.
type docx struct {
	src   []byte
	body  strings.Builder
	links []string // hyperlink targets; rId3 is the first
	// lists holds, per numbering instance, whether it is ordered and its
	// first number; numId 1 is the first.
	lists []listDef
}

type listDef struct {
	ordered bool
	start   int
}

type runFormat struct {
	bold, italic, strike, code bool
	link                       bool
}

// blocks writes the block children of n. Lists nest by level.
func (d *docx) blocks(n ast.Node, level int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		d.block(c, level)
	}
}

func (d *docx) block(n ast.Node, level int) {
	switch b := n.(type) {
	case *ast.Heading:
		style := "Heading" + strconv.Itoa(min(b.Level, 3))
		d.paragraph(b, `<w:pStyle w:val="`+style+`"/>`)
	case *ast.Paragraph, *ast.TextBlock:
		d.paragraph(b, "")
	case *ast.List:
		d.list(b, level)
	case *ast.FencedCodeBlock:
		d.code(b)
	case *ast.CodeBlock:
		d.code(b)
	case *ast.Blockquote:
		for c := b.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Kind() == ast.KindParagraph {
				d.paragraph(c, `<w:pStyle w:val="Quote"/>`)
			} else {
				d.block(c, level)
			}
		}
	case *ast.ThematicBreak:
		d.body.WriteString(`<w:p><w:pPr><w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="A0A7B4"/></w:pBdr></w:pPr></w:p>`)
	case *east.Table:
		d.table(b)
	case *ast.HTMLBlock:
		d.body.WriteString(`<w:p><w:pPr><w:pStyle w:val="Code"/></w:pPr>`)
		d.lines(b)
		d.body.WriteString(`</w:p>`)
	default:
		d.blocks(n, level)
	}
}

// paragraph writes one paragraph of n's inline content.
func (d *docx) paragraph(n ast.Node, pPr string) {
	d.body.WriteString(`<w:p>`)
	if pPr != "" {
		d.body.WriteString(`<w:pPr>` + pPr + `</w:pPr>`)
	}
	d.inlines(n, runFormat{})
	d.body.WriteString(`</w:p>`)
}

// list writes each item's first paragraph as a numbered or bulleted
// paragraph at the list's level; further blocks of an item follow indented,
// and nested lists go one level deeper.
func (d *docx) list(l *ast.List, level int) {
	def := listDef{ordered: l.IsOrdered(), start: max(l.Start, 1)}
	if !def.ordered {
		def.start = 1
	}
	d.lists = append(d.lists, def)
	numID := len(d.lists)
	lvl := min(level, maxListLevel)
	numPr := fmt.Sprintf(`<w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="%d"/><w:numId w:val="%d"/></w:numPr>`, lvl, numID)
	indent := fmt.Sprintf(`<w:pStyle w:val="ListParagraph"/><w:ind w:left="%d"/>`, listIndent(lvl))
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		first := true
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			switch c.Kind() {
			case ast.KindParagraph, ast.KindTextBlock:
				if first {
					d.paragraph(c, numPr)
				} else {
					d.paragraph(c, indent)
				}
			case ast.KindList:
				d.list(c.(*ast.List), level+1)
			default:
				d.block(c, level+1)
			}
			first = false
		}
		if first {
			// An empty item still shows its bullet or number.
			d.body.WriteString(`<w:p><w:pPr>` + numPr + `</w:pPr></w:p>`)
		}
	}
}

func listIndent(level int) int { return 720 + 360*level }

// code writes a code block as one monospaced paragraph, its lines kept.
func (d *docx) code(n ast.Node) {
	d.body.WriteString(`<w:p><w:pPr><w:pStyle w:val="Code"/></w:pPr>`)
	d.lines(n)
	d.body.WriteString(`</w:p>`)
}

func (d *docx) lines(n ast.Node) {
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(d.src)), "\n")
		if i > 0 {
			d.body.WriteString(`<w:r><w:br/></w:r>`)
		}
		d.run(line, runFormat{})
	}
}

// table writes a Markdown table as a Word table: a bold header row that
// repeats on each page, and cells aligned as the Markdown says.
func (d *docx) table(t *east.Table) {
	d.body.WriteString(`<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="0" w:type="auto"/><w:tblLook w:val="04A0" w:firstRow="1" w:lastRow="0" w:firstColumn="0" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/></w:tblPr><w:tblGrid>`)
	cols := len(t.Alignments)
	for i := 0; i < cols; i++ {
		d.body.WriteString(`<w:gridCol/>`)
	}
	d.body.WriteString(`</w:tblGrid>`)
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		header := row.Kind() == east.KindTableHeader
		d.body.WriteString(`<w:tr>`)
		if header {
			d.body.WriteString(`<w:trPr><w:tblHeader/></w:trPr>`)
		}
		i := 0
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			d.body.WriteString(`<w:tc><w:tcPr><w:tcW w:w="0" w:type="auto"/>`)
			if header {
				d.body.WriteString(`<w:shd w:val="clear" w:color="auto" w:fill="DDEBF7"/>`)
			}
			d.body.WriteString(`</w:tcPr><w:p>`)
			if i < cols {
				switch t.Alignments[i] {
				case east.AlignCenter:
					d.body.WriteString(`<w:pPr><w:spacing w:after="0"/><w:jc w:val="center"/></w:pPr>`)
				case east.AlignRight:
					d.body.WriteString(`<w:pPr><w:spacing w:after="0"/><w:jc w:val="right"/></w:pPr>`)
				default:
					d.body.WriteString(`<w:pPr><w:spacing w:after="0"/></w:pPr>`)
				}
			}
			d.inlines(cell, runFormat{bold: header})
			d.body.WriteString(`</w:p></w:tc>`)
			i++
		}
		// Word needs every row to have every cell.
		for ; i < cols; i++ {
			d.body.WriteString(`<w:tc><w:tcPr><w:tcW w:w="0" w:type="auto"/></w:tcPr><w:p/></w:tc>`)
		}
		d.body.WriteString(`</w:tr>`)
	}
	d.body.WriteString(`</w:tbl><w:p/>`)
}

// inlines writes n's inline children as runs in format f.
func (d *docx) inlines(n ast.Node, f runFormat) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		d.inline(c, f)
	}
}

func (d *docx) inline(n ast.Node, f runFormat) {
	switch x := n.(type) {
	case *ast.Text:
		d.run(string(x.Segment.Value(d.src)), f)
		switch {
		case x.HardLineBreak():
			d.body.WriteString(`<w:r><w:br/></w:r>`)
		case x.SoftLineBreak():
			d.run(" ", f)
		}
	case *ast.String:
		d.run(string(x.Value), f)
	case *ast.Emphasis:
		g := f
		if x.Level >= 2 {
			g.bold = true
		} else {
			g.italic = true
		}
		d.inlines(x, g)
	case *east.Strikethrough:
		g := f
		g.strike = true
		d.inlines(x, g)
	case *ast.CodeSpan:
		g := f
		g.code = true
		var b strings.Builder
		for c := x.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(d.src))
			} else if s, ok := c.(*ast.String); ok {
				b.Write(s.Value)
			}
		}
		d.run(b.String(), g)
	case *ast.Link:
		d.link(string(x.Destination), x, f)
	case *ast.AutoLink:
		u := string(x.URL(d.src))
		if x.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
			u = "mailto:" + u
		}
		d.linkText(u, string(x.Label(d.src)), f)
	case *ast.Image:
		alt := nodeText(x, d.src)
		d.run("[image: "+alt+"]", f)
	case *ast.RawHTML:
		for i := 0; i < x.Segments.Len(); i++ {
			seg := x.Segments.At(i)
			d.run(string(seg.Value(d.src)), f)
		}
	default:
		d.inlines(n, f)
	}
}

// link writes a hyperlink to dest around n's content; a target that is not
// a web or mail address stays plain text, so a document opens no files or
// scripts.
func (d *docx) link(dest string, n ast.Node, f runFormat) {
	id, ok := d.linkID(dest)
	if !ok {
		d.inlines(n, f)
		return
	}
	d.body.WriteString(`<w:hyperlink r:id="` + id + `" w:history="1">`)
	g := f
	g.link = true
	d.inlines(n, g)
	d.body.WriteString(`</w:hyperlink>`)
}

func (d *docx) linkText(dest, label string, f runFormat) {
	id, ok := d.linkID(dest)
	if !ok {
		d.run(label, f)
		return
	}
	g := f
	g.link = true
	d.body.WriteString(`<w:hyperlink r:id="` + id + `" w:history="1">`)
	d.run(label, g)
	d.body.WriteString(`</w:hyperlink>`)
}

func (d *docx) linkID(dest string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(dest))
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto":
	default:
		return "", false
	}
	d.links = append(d.links, u.String())
	return "rId" + strconv.Itoa(len(d.links)+2), true
}

// run writes text as one run in format f.
func (d *docx) run(s string, f runFormat) {
	if s == "" {
		return
	}
	d.body.WriteString(`<w:r>`)
	if f != (runFormat{}) {
		d.body.WriteString(`<w:rPr>`)
		switch {
		case f.code:
			d.body.WriteString(`<w:rStyle w:val="CodeChar"/>`)
		case f.link:
			d.body.WriteString(`<w:rStyle w:val="Hyperlink"/>`)
		}
		if f.bold {
			d.body.WriteString(`<w:b/>`)
		}
		if f.italic {
			d.body.WriteString(`<w:i/>`)
		}
		if f.strike {
			d.body.WriteString(`<w:strike/>`)
		}
		d.body.WriteString(`</w:rPr>`)
	}
	d.body.WriteString(`<w:t xml:space="preserve">`)
	xml.EscapeText(&d.body, []byte(s))
	d.body.WriteString(`</w:t></w:r>`)
}

// nodeText is the plain text of n's inline content.
func nodeText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// rels relates the document to its styles, its numbering and each link.
func (d *docx) rels() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/>`)
	for i, target := range d.links {
		b.WriteString(`<Relationship Id="rId` + strconv.Itoa(i+3) + `" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="`)
		xml.EscapeText(&b, []byte(target))
		b.WriteString(`" TargetMode="External"/>`)
	}
	b.WriteString(`</Relationships>`)
	return b.String()
}

// bulletChars are the bullets of list levels, repeating.
var bulletChars = []string{"•", "◦", "▪"}

// numbering defines a bullet and a numbered list of nine levels each, and
// one instance per list so that every numbered list counts from its own
// start.
func (d *docx) numbering() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">`)
	for abs, ordered := range []bool{false, true} {
		fmt.Fprintf(&b, `<w:abstractNum w:abstractNumId="%d"><w:multiLevelType w:val="hybridMultilevel"/>`, abs)
		for lvl := 0; lvl <= maxListLevel; lvl++ {
			format, label := "bullet", bulletChars[lvl%len(bulletChars)]
			if ordered {
				format, label = []string{"decimal", "lowerLetter", "lowerRoman"}[lvl%3], "%"+strconv.Itoa(lvl+1)+"."
			}
			fmt.Fprintf(&b, `<w:lvl w:ilvl="%d"><w:start w:val="1"/><w:numFmt w:val="%s"/><w:lvlText w:val="%s"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="%d" w:hanging="360"/></w:pPr></w:lvl>`,
				lvl, format, label, listIndent(lvl))
		}
		b.WriteString(`</w:abstractNum>`)
	}
	for i, l := range d.lists {
		abs := 0
		if l.ordered {
			abs = 1
		}
		fmt.Fprintf(&b, `<w:num w:numId="%d"><w:abstractNumId w:val="%d"/>`, i+1, abs)
		if l.ordered {
			for lvl := 0; lvl <= maxListLevel; lvl++ {
				fmt.Fprintf(&b, `<w:lvlOverride w:ilvl="%d"><w:startOverride w:val="%d"/></w:lvlOverride>`, lvl, l.start)
			}
		}
		b.WriteString(`</w:num>`)
	}
	b.WriteString(`</w:numbering>`)
	return b.String()
}

// xmlSafe drops characters XML 1.0 cannot hold.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF {
			return r
		}
		return -1
	}, s)
}
