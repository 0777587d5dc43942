package web_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"datadesk/api/apitest"
)

// TestHeadSignedLink: HEAD on a valid signed link answered 401, where GET
// answered the file. HEAD now answers as GET does, without the body.
func TestHeadSignedLink(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	content := "a,b\n1,2\n"
	code, m := ts.Upload(token, "t.csv", []byte(content))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	link := m["file"].(map[string]any)["download_url"].(string)
	for _, tc := range []struct {
		url  string
		code int
	}{
		{link, http.StatusOK},
		{link + "x", http.StatusUnauthorized},
	} {
		resp, err := http.Head(ts.URL + tc.url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("HEAD %s: got %d, want %d", tc.url, resp.StatusCode, tc.code)
		}
		if len(body) != 0 {
			t.Errorf("HEAD %s: a body of %d bytes", tc.url, len(body))
		}
		if tc.code == http.StatusOK && resp.Header.Get("Content-Length") != strconv.Itoa(len(content)) {
			t.Errorf("HEAD: Content-Length %q, want %d", resp.Header.Get("Content-Length"), len(content))
		}
	}
}
