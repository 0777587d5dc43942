package web_test

import (
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
	apitest.Run(t, ts, []apitest.Scenario{
		{Name: "a valid link", Method: "HEAD", URL: link, ExpectedStatus: http.StatusOK,
			After: func(t testing.TB, _ *apitest.Server, res *http.Response, body []byte) {
				if len(body) != 0 {
					t.Errorf("HEAD %s: a body of %d bytes", link, len(body))
				}
				if res.Header.Get("Content-Length") != strconv.Itoa(len(content)) {
					t.Errorf("HEAD: Content-Length %q, want %d", res.Header.Get("Content-Length"), len(content))
				}
			}},
		{Name: "a link altered", Method: "HEAD", URL: link + "x", ExpectedStatus: http.StatusUnauthorized,
			After: func(t testing.TB, _ *apitest.Server, _ *http.Response, body []byte) {
				if len(body) != 0 {
					t.Errorf("HEAD %sx: a body of %d bytes", link, len(body))
				}
			}},
	})
}
