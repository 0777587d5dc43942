package api_test

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"datadesk"
	"datadesk/api/apitest"
)

// TestReceiveBlamesTheRightSide: a failure to write an upload's file was
// answered as the client's ("the upload could not be read", 400). A body
// that fails to read is still the client's; a file the server cannot
// write is the server's.
func TestReceiveBlamesTheRightSide(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	_, _, _, err := ts.Server.Receive(strings.NewReader("a,b\n1,2\n"), filepath.Join(t.TempDir(), "gone"))
	if e := datadesk.AsError(err); e.Code != datadesk.Internal || !strings.Contains(e.Message, "could not store") {
		t.Errorf("a folder that is not there: %v (%s), want the server's failure", err, e.Code)
	}
	_, _, _, err = ts.Server.Receive(iotest.ErrReader(io.ErrUnexpectedEOF), t.TempDir())
	if e := datadesk.AsError(err); e.Code != datadesk.Invalid || !strings.Contains(e.Message, "could not be read") {
		t.Errorf("a body that breaks off: %v (%s), want the client's", err, e.Code)
	}
}
