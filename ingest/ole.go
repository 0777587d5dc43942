package ingest

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/richardlehane/mscfb"
)

// readOLE opens an OLE compound file and returns whether it holds an
// encrypted OOXML package, and the first limit bytes of its BIFF workbook
// stream, if it has one: the BIFF8 "Workbook", else the BIFF5 "Book". A stream never takes more memory than the file
// has bytes, whatever its directory entry claims; a damaged file is an
// error, never a panic.
func readOLE(path string, limit int64) (encrypted bool, workbook []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			encrypted, workbook, err = false, nil, fmt.Errorf("damaged compound file: %v", r)
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		limit = min(limit, st.Size())
	}
	doc, err := mscfb.New(f)
	if err != nil {
		return false, nil, err
	}
	// A file may hold both a BIFF8 "Workbook" and a BIFF5 "Book" stream
	// (ABBYY FineReader writes both): the BIFF8 one has the text in
	// Unicode, the BIFF5 one in a code page that may lack some of it, so
	// it is read as xlrd and Excel read it. Names match in any case, as
	// LibreOffice's do.
	var book []byte
	for entry, err := doc.Next(); err == nil; entry, err = doc.Next() {
		switch strings.ToLower(entry.Name) {
		case "encryptioninfo", "encryptedpackage":
			return true, nil, nil
		case "workbook":
			return false, readEntry(entry, limit), nil
		case "book":
			if book == nil {
				book = readEntry(entry, limit)
			}
		}
	}
	return false, book, nil
}

// readEntry reads the first limit bytes of a stream.
func readEntry(entry *mscfb.File, limit int64) []byte {
	buf := make([]byte, min(entry.Size, limit))
	n, _ := io.ReadFull(entry, buf)
	return buf[:n]
}

// workbookStream returns the BIFF workbook stream of an OLE file, at most
// maxBIFFScan bytes of it.
func workbookStream(path string) ([]byte, error) {
	_, wb, err := readOLE(path, maxBIFFScan)
	if err == nil && wb == nil {
		err = io.ErrUnexpectedEOF
	}
	return wb, err
}
