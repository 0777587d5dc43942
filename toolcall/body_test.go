package toolcall

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"datadesk"
)

// TestSpoolBody: a body up to BodyInMemory stays in memory, a larger one
// goes to a file that is gone from its directory at once, whether or not
// the request gives its size; one past the limit is refused, and one that
// cannot be read says so.
func TestSpoolBody(t *testing.T) {
	small := strings.Repeat("s", 100)
	large := strings.Repeat("l", BodyInMemory+10)
	for _, tc := range []struct {
		name   string
		body   io.Reader
		size   int64
		limit  int64
		inFile bool
		want   string
		code   datadesk.Code
	}{
		{"small, sized", strings.NewReader(small), int64(len(small)), MaxBody, false, small, ""},
		{"small, size unknown", strings.NewReader(small), -1, MaxBody, false, small, ""},
		{"exactly the most held", strings.NewReader(large[:BodyInMemory]), -1, MaxBody, false, large[:BodyInMemory], ""},
		{"large, sized", strings.NewReader(large), int64(len(large)), MaxBody, true, large, ""},
		{"large, size unknown", strings.NewReader(large), -1, MaxBody, true, large, ""},
		{"large, size said small", strings.NewReader(large), 10, MaxBody, true, large, ""},
		{"past the limit, held", strings.NewReader(small), -1, 50, false, "", datadesk.TooLarge},
		{"past the limit, in a file", strings.NewReader(large), -1, BodyInMemory + 5, false, "", datadesk.TooLarge},
		{"broken off", io.MultiReader(strings.NewReader(large), errReader{}), -1, MaxBody, false, "", datadesk.Invalid},
		{"broken off early", errReader{}, -1, MaxBody, false, "", datadesk.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b, err := Spool(tc.body, tc.size, tc.limit, dir)
			if tc.code != "" {
				if err == nil || datadesk.AsError(err).Code != tc.code {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if (b.file != nil) != tc.inFile {
				t.Errorf("kept in a file: %v, want %v", b.file != nil, tc.inFile)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("%d files left in the directory", len(left))
			}
			for range 2 {
				got, err := io.ReadAll(io.NewSectionReader(b, 0, b.Size()))
				if err != nil || !bytes.Equal(got, []byte(tc.want)) {
					t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(tc.want))
				}
			}
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
