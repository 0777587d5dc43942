package ingest

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk/engine/typing"
)

// stdSheet reads a worksheet with encoding/xml, as the reader did before
// xmlScanner: the oracle the fast reader is held to.
func stdSheet(wb *xlsxBook, r io.Reader) ([]string, error) {
	var out []string
	d := xml.NewDecoder(r)
	var texts []string
	var kinds []typing.CellKind
	row, col := 0, 0
	var cell xlsxCell
	inCell, inInline, phonetic := false, false, 0
	var target *strings.Builder
	var v, is strings.Builder
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				row++
				if n, err := strconv.Atoi(attr(t, "r")); err == nil && n > 0 {
					row = n
				}
				texts, kinds, col = texts[:0], kinds[:0], 0
			case "c":
				col++
				if c := refColumn([]byte(attr(t, "r"))); c > 0 {
					col = c
				}
				cell = xlsxCell{typ: attr(t, "t")}
				cell.style, _ = strconv.Atoi(attr(t, "s"))
				inCell = true
				v.Reset()
				is.Reset()
			case "v":
				if inCell {
					target = &v
				}
			case "is":
				inInline = true
			case "t":
				if inInline && phonetic == 0 {
					target = &is
				}
			case "rPh":
				phonetic++
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "row":
				if len(texts) > 0 {
					out = append(out, fmt.Sprintf("%d %q %v", row, texts, kinds))
				}
			case "sheetData":
				return out, nil
			case "v", "t":
				target = nil
			case "is":
				inInline = false
			case "rPh":
				phonetic--
			case "c":
				inCell = false
				text, kind := wb.cellValue(cell, v.String(), is.String())
				if kind == typing.KindEmpty || col < 1 {
					continue
				}
				for len(texts) < col {
					texts, kinds = append(texts, ""), append(kinds, typing.KindEmpty)
				}
				texts[col-1], kinds[col-1] = text, kind
			}
		case xml.CharData:
			if target != nil && target.Len() < maxXMLText {
				target.Write(t)
			}
		}
	}
}

// fastSheet reads a worksheet with the reader the server uses.
func fastSheet(wb *xlsxBook, r io.Reader) ([]string, error) {
	var out []string
	err := wb.readSheet("f.xlsx", "s", r, func(row int, texts []string, kinds []typing.CellKind) error {
		out = append(out, fmt.Sprintf("%d %q %v", row, texts, kinds))
		return nil
	})
	return out, err
}

// TestSheetReaderAgreesWithEncodingXML: every worksheet of every real
// workbook in the corpus and the tests' files reads to the same rows,
// cell by cell, with the fast reader as with encoding/xml.
func TestSheetReaderAgreesWithEncodingXML(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{sheetjsDir(), "testdata"} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(strings.ToLower(p), ".xlsx") || strings.HasSuffix(strings.ToLower(p), ".xlsm")) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 40 {
		t.Fatalf("%d workbooks found; the corpus is missing", len(files))
	}
	sheets := 0
	for _, p := range files {
		wb, err := openXLSX(p, newReadMemory(DefaultMaxReadMemory).hold(context.Background()))
		if err != nil {
			continue // encrypted or damaged: refused before any sheet is read
		}
		for _, sh := range wb.sheets {
			f := wb.parts[strings.ToLower(sh.part)]
			if f == nil {
				continue
			}
			read := func(fn func(*xlsxBook, io.Reader) ([]string, error)) ([]string, error) {
				rc, err := f.Open()
				if err != nil {
					return nil, err
				}
				defer rc.Close()
				return fn(wb, rc)
			}
			want, werr := read(stdSheet)
			got, gerr := read(fastSheet)
			if (werr != nil) != (gerr != nil) {
				t.Errorf("%s %q: encoding/xml %v, fast reader %v", p, sh.name, werr, gerr)
				continue
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %q: the rows differ:\n%s", p, sh.name, firstDifference(want, got))
			}
			sheets++
		}
		wb.zr.Close()
	}
	t.Logf("%d sheets of %d workbooks read the same", sheets, len(files))
}

func firstDifference(want, got []string) string {
	for i := range max(len(want), len(got)) {
		w, g := "(none)", "(none)"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("row %d\nwant %s\ngot  %s", i, w, g)
		}
	}
	return ""
}

// TestSheetReaderEdges: what a worksheet's XML may hold beside plain
// cells, read as encoding/xml reads it, and cut or malformed XML refused.
func TestSheetReaderEdges(t *testing.T) {
	t.Parallel()
	wb := &xlsxBook{strings: stringsOf("zero", "one")}
	for _, sheet := range sheetXMLSeeds() {
		want, werr := stdSheet(wb, strings.NewReader(sheet))
		got, gerr := fastSheet(wb, strings.NewReader(sheet))
		if (werr != nil) != (gerr != nil) || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q:\nencoding/xml %v %q\nfast reader  %v %q", sheet, werr, want, gerr, got)
		}
	}
	// A text longer than the scanner holds whole comes in pieces, cut
	// neither in an entity nor in a character.
	long := strings.Repeat("é&amp;\r\n", xmlMaxToken/6)
	sheet := `<sheetData><row><c t="inlineStr"><is><t>` + long + `</t></is></c></row></sheetData>`
	got, err := fastSheet(wb, strings.NewReader(sheet))
	want, _ := stdSheet(wb, strings.NewReader(sheet))
	if err != nil || len(got) != 1 || got[0] != want[0] {
		t.Errorf("a long text: %v, %d rows, same %v", err, len(got), len(got) == 1 && got[0] == want[0])
	}
}

func sheetXMLSeeds() []string {
	return []string{
		`<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>1</v></c><c r="C1"><v>2.5</v></c></row></sheetData></worksheet>`,
		`<?xml version="1.0"?><!DOCTYPE x [<!ELEMENT x ANY>]><x:worksheet xmlns:x="u"><x:sheetData><x:row><x:c t="inlineStr"><x:is><x:t>a&lt;b&#x41;&#66;</x:t></x:is></x:c></x:row></x:sheetData></x:worksheet>`,
		`<sheetData><row r="2"/><row r = '3' ><c r='B3' t="str" s="0"><v><![CDATA[<x>&amp;]]></v></c><c/><c><v>7</v></c></row></sheetData>`,
		`<sheetData><row><c t="inlineStr"><is><r><t>rich</t></r><r><t xml:space="preserve"> text</t></r><rPh><t>ignored</t></rPh></is></c></row></sheetData>`,
		"<sheetData><row><c t=\"inlineStr\"><is><t>line\r\nend\rx</t></is></c><!-- a comment <c> --><?pi <c>?></row></sheetData>",
		`<sheetData><row><c t="b"><v>1</v></c><c t="e"><v>#N/A</v></c><c t="d"><v>2024-01-02T03:04:05</v></c></row></sheetData>`,
		`<sheetData><row><c r="A1" attr=">"><v>3</v></c></row></sheetData>`,
		`<sheetData><row><c><v>1</v></c></row>`, // no end: rows so far
		`<sheetData><row><c><v>1&bogus;</v></c></row></sheetData>`,
		`<sheetData><row><c><v>1</v></c><c`,
		"<sheetData><row><c><v>\x01</v></c></row></sheetData>",
		"<sheetData><row><c><v>\xff</v></c></row></sheetData>",
		`<sheetData><row><c t="s"><v> 0 </v></c><c t="s"><v>9</v></c><c t="n"><v>x</v></c></row></sheetData>`,
	}
}

// FuzzSheetXML: where encoding/xml reads a worksheet, the fast reader reads
// the same rows; it never panics.
func FuzzSheetXML(f *testing.F) {
	for _, s := range sheetXMLSeeds() {
		f.Add([]byte(s))
	}
	wb := &xlsxBook{strings: stringsOf("zero", "one")}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := stdSheet(wb, bytes.NewReader(data))
		got, gerr := fastSheet(wb, bytes.NewReader(data))
		if gerr != nil && strings.Contains(gerr.Error(), "columns; at most") {
			return // the width limit, which the oracle does not have
		}
		if werr == nil && (gerr != nil || strings.Join(got, "\n") != strings.Join(want, "\n")) {
			t.Fatalf("encoding/xml reads %q as %q; the fast reader %v %q", data, want, gerr, got)
		}
	})
}

// TestPipelinedEndsItsReader: whether the caller stops early, fails or
// panics, the goroutine reading the sheet ends.
func TestPipelinedEndsItsReader(t *testing.T) {
	for _, how := range []string{"stop", "fail", "panic"} {
		done := make(chan struct{})
		rows := pipelined("f.xlsx", "s", func(yield func(int, []string, []typing.CellKind) error) error {
			defer close(done)
			for i := 1; ; i++ {
				if err := yield(i, []string{"x"}, []typing.CellKind{typing.KindText}); err != nil {
					return err
				}
			}
		})
		func() {
			defer func() { _ = recover() }()
			_ = rows(func(row int, _ []string, _ []typing.CellKind) error {
				switch {
				case row < 5000:
					return nil
				case how == "panic":
					panic("the caller failed")
				case how == "fail":
					return fmt.Errorf("the caller failed")
				}
				return errStop
			})
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the reader goroutine did not end", how)
		}
	}
}

// stringsOf is a workbook's shared strings holding list.
func stringsOf(list ...string) sharedStrings {
	var ss sharedStrings
	ss.text = make([]byte, 0, len(strings.Join(list, "")))
	for _, s := range list {
		if err := ss.add([]byte(s)); err != nil {
			panic(err)
		}
	}
	return ss
}
