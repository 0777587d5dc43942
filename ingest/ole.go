package ingest

import (
	"fmt"
	"io"
	"os"

	"github.com/richardlehane/mscfb"
)

// readOLE opens an OLE compound file and returns whether it holds an
// encrypted OOXML package, and the first limit bytes of its BIFF workbook
// stream, if it has one. A stream never takes more memory than the file
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
	for entry, err := doc.Next(); err == nil; entry, err = doc.Next() {
		switch entry.Name {
		case "EncryptionInfo", "EncryptedPackage":
			return true, nil, nil
		case "Workbook", "Book":
			buf := make([]byte, min(entry.Size, limit))
			n, _ := io.ReadFull(entry, buf)
			return false, buf[:n], nil
		}
	}
	return false, nil, nil
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
