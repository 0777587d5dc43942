package engine

import (
	"bufio"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// A spool keeps the rows a source yields through Go on disk while their
// columns are counted, so that the typed table can be made of them once
// the types are decided without DuckDB holding them all as text first: a
// staging table, like everything a transaction writes, stays in memory
// until the transaction ends, and its rows would be held twice (as text,
// then typed) at the end of a load.
//
// A row is the count of its values, then each value: 0 for an empty cell
// (NULL), else its length plus one and its bytes, counts as uvarints.
type spool struct {
	fh   *os.File
	w    *bufio.Writer
	n    [binary.MaxVarintLen64]byte
	rows int64
}

// newSpool creates a spool in dir, a folder of the owner's, unlinked at
// once: it goes with the process whatever happens to the load.
func newSpool(dir string) (*spool, error) {
	fh, err := os.CreateTemp(dir, "spool-*")
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if err := os.Remove(fh.Name()); err != nil {
		fh.Close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &spool{fh: fh, w: bufio.NewWriterSize(fh, 1<<20)}, nil
}

// add writes a row: vals are strings or nil for an empty cell.
func (sp *spool) add(vals []driver.Value) error {
	sp.uvarint(uint64(len(vals)))
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			sp.uvarint(0)
			continue
		}
		sp.uvarint(uint64(len(s)) + 1)
		sp.w.WriteString(s)
	}
	sp.rows++
	// bufio.Writer keeps its first error and returns it from every later
	// write; a row's worth is checked here.
	_, err := sp.w.Write(nil)
	return err
}

func (sp *spool) uvarint(v uint64) {
	sp.w.Write(sp.n[:binary.PutUvarint(sp.n[:], v)])
}

// each yields the rows written, from the first, as width values: a row
// shorter than width is padded with empty cells. The slice is reused.
func (sp *spool) each(width int, yield func(vals []driver.Value) error) error {
	if err := sp.w.Flush(); err != nil {
		return fmt.Errorf("engine: spooling rows: %w", err)
	}
	if _, err := sp.fh.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	r := bufio.NewReaderSize(sp.fh, 1<<20)
	vals := make([]driver.Value, width)
	var (
		buf  []byte
		lens = make([]int, width)
	)
	for range sp.rows {
		count, err := binary.ReadUvarint(r)
		if err != nil || count > uint64(width) {
			return sp.broken(err)
		}
		// The row's text is read into one buffer and made one string,
		// which its values share.
		buf = buf[:0]
		for i := range int(count) {
			l, err := binary.ReadUvarint(r)
			if err != nil || l > 1<<40 {
				return sp.broken(err)
			}
			lens[i] = int(l)
			if l == 0 {
				continue
			}
			start := len(buf)
			buf = slices.Grow(buf, int(l)-1)[:start+int(l)-1]
			if _, err := io.ReadFull(r, buf[start:]); err != nil {
				return sp.broken(err)
			}
		}
		text, at := string(buf), 0
		for i := range vals {
			if i >= int(count) || lens[i] == 0 {
				vals[i] = nil
				continue
			}
			vals[i] = text[at : at+lens[i]-1]
			at += lens[i] - 1
		}
		if err := yield(vals); err != nil {
			return err
		}
	}
	return nil
}

func (sp *spool) broken(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("engine: reading spooled rows: %w", err)
}

// Close removes the spool.
func (sp *spool) Close() error { return sp.fh.Close() }
