package api_test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"datadesk/api/apitest"
)

// TestPageUploadAskedFirst: a viewer's upload from the files page was
// written whole to the system's temp folder (the form read to find its
// CSRF token) before the policy refused it. The page's upload is now asked
// of the policy before a byte of its body is read, and read as a stream
// into the owner's folder under the data directory, never the system's
// temp folder (here one that does not exist).
func TestPageUploadAskedFirst(t *testing.T) {
	ts := apitest.New(t, apitest.Options{MaxUpload: 48 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "vic", "viewer")
	apitest.AddUser(t, users, "ana", "analyst")
	viewer, viewerCSRF := ts.PageSignIn(users, "vic")
	analyst, analystCSRF := ts.PageSignIn(users, "ana")
	// Not parallel: it sets TMPDIR for the whole process.
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "no such folder"))
	const size = 33 << 20
	post := func(client *http.Client, csrf string) (*http.Response, float64) {
		read := bodyBytesRead(ts, "/files/upload")
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := ts.PageUpload(client, csrf, "big.txt", bytes.Repeat([]byte("words "), size/6))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp, bodyBytesRead(ts, "/files/upload") - read
	}
	resp, read := post(viewer, viewerCSRF)
	t.Logf("the viewer: %d %s, %d KiB read", resp.StatusCode, resp.Header.Get("Location"), int(read)>>10)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "Not+done") {
		t.Errorf("a viewer's upload: %d %s, want back to the files page, not done", resp.StatusCode, loc)
	}
	if read > 64<<10 {
		t.Errorf("a viewer's upload was read for %d MiB before the policy refused it", int(read)>>20)
	}
	resp, read = post(analyst, analystCSRF)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "Uploaded") {
		t.Errorf("an analyst's upload with no system temp folder: %d %s", resp.StatusCode, loc)
	}
	t.Logf("the analyst's upload read %d MiB", int(read)>>20)
}

// bodyBytesRead is how many bytes of request bodies the server has read
// on route.
func bodyBytesRead(ts *apitest.Server, route string) float64 {
	var m dto.Metric
	if err := ts.Server.RequestBytes().WithLabelValues(route).Write(&m); err != nil {
		ts.T.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
