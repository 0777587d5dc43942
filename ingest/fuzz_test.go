package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/typing"
)

// Fuzz targets for the readers, through Ingester.Read, the entry point
// uploads use, on a temporary file with the format's extension: whatever
// the bytes, a read gives tables or a 4xx error, never a panic, a hang or
// an internal error. Seeds are in testdata/fuzz/<target>/; every finding
// stays there as a regression case. make fuzz runs each for a few seconds.

// fuzzMaxRows bounds the rows a target drains from each table.
const fuzzMaxRows = 2000

// fuzzTimeout fails an input whose read takes longer: a hang is a finding
// too, and failing saves the input as a regression case.
const fuzzTimeout = 10 * time.Second

var errEnough = errors.New("enough rows")

func fuzzRead(t *testing.T, ext string, data []byte) {
	done := make(chan struct{})
	var failure string
	go func() {
		defer close(done)
		failure = readAll(t.TempDir(), ext, data)
	}()
	select {
	case <-done:
		if failure != "" {
			t.Fatal(failure)
		}
	case <-time.After(fuzzTimeout):
		t.Fatalf("reading %d bytes as %s took longer than %s", len(data), ext, fuzzTimeout)
	}
}

// readAll reads data as a file of type ext and drains its tables; it says
// what went wrong, if anything did.
func readAll(dir, ext string, data []byte) string {
	path := filepath.Join(dir, "upload"+ext)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err.Error()
	}
	in := New(Config{MaxUnzipSize: 64 << 20, MaxLine: 1 << 20})
	res, err := in.Read(context.Background(), path, "upload"+ext, dir)
	if err != nil {
		return fuzzError(err)
	}
	defer res.Close()
	for _, src := range res.Tables {
		n := 0
		count := func() error {
			if n++; n > fuzzMaxRows {
				return errEnough
			}
			return nil
		}
		var err error
		switch {
		case src.Cells != nil:
			_, err = src.Cells(func([]string, []typing.CellKind) error { return count() })
		case src.RowsWithNulls != nil:
			_, err = src.RowsWithNulls(func([]string, []bool) error { return count() })
		default:
			_, err = src.Rows(func([]string) error { return count() })
		}
		if err != nil && !errors.Is(err, errEnough) {
			if msg := fuzzError(err); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// fuzzError says what is wrong with an error that would answer 5xx: bad
// input must be the client's error, with a message.
func fuzzError(err error) string {
	if code := datadesk.ErrorCode(err); code == datadesk.Internal || datadesk.AsError(err).Message == "" {
		return fmt.Sprintf("bad input gave %s: %v", code, err)
	}
	return ""
}

func FuzzCSV(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "id;name\n007;\"x;y\"\n", "a\tb\n\"q\"\"r\"\t2\n", "\xef\xbb\xbfa,b\r\n1,\"2\n3\"\r\n",
		"\xff\xfea\x00,\x00b\x00\n\x001\x00,\x002\x00\n\x00", "5\" screen,b\n1,2\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, ".csv", data) })
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{`[{"a":1,"b":"x"}]`, "{\"a\":1}\n{\"a\":2}\n", `{"columns":[{"key":"a","label":"A"}],"rows":[[1]]}`,
		`[[1,2],[3,4]]`, `[{"a":{"b":[1,2]}}]`, `[{"id":12345678901234567890}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, ".json", data) })
}

func FuzzXLSX(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, ".xlsx", data) })
}

func FuzzXLS(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, ".xls", data) })
}
