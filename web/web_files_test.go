package web_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk/api/apitest"
)

// TestPageFormsNeedCSRF: the files page's upload and delete forms change
// state only with the session's CSRF token.
func TestPageFormsNeedCSRF(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	_, m := ts.Upload(ana, "keep.csv", []byte("a,b\n1,2\n"))
	id := m["file"].(map[string]any)["id"].(string)
	client, csrf, _ := ts.SignIn("ana", "correct horse battery")
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	upload := func(token string) *http.Response {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		if token != "" {
			mw.WriteField("csrf_token", token)
		}
		w, _ := mw.CreateFormFile("file", "new.csv")
		w.Write([]byte("x,y\n1,2\n"))
		mw.Close()
		resp, err := client.Post(ts.URL+"/files/upload", mw.FormDataContentType(), &b)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	del := func(token string) *http.Response {
		resp, err := client.PostForm(ts.URL+"/files/"+id+"/delete", url.Values{"csrf_token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		name string
		do   func() *http.Response
	}{
		{"upload without token", func() *http.Response { return upload("") }},
		{"upload with a wrong token", func() *http.Response { return upload("x" + csrf) }},
		{"delete without token", func() *http.Response { return del("") }},
		{"delete with a wrong token", func() *http.Response { return del("x" + csrf) }},
	} {
		if resp := tc.do(); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if _, m, _ := ts.Do("GET", "/v1/files", ana, nil, ""); len(m["files"].([]any)) != 1 {
		t.Fatalf("files changed without a CSRF token: %v", m)
	}
	if resp := upload(csrf); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "Uploaded") {
		t.Errorf("upload with the token: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := del(csrf); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "Deleted") {
		t.Errorf("delete with the token: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, m, _ = ts.Do("GET", "/v1/files", ana, nil, "")
	if files := m["files"].([]any); len(files) != 1 || files[0].(map[string]any)["filename"] != "new.csv" {
		t.Errorf("after upload and delete: %v", files)
	}
}

// TestPageMessagesOnlyTheServers: ?msg= put any text on any page, the
// sign-in page too ("Your session has expired: sign in at evil.example").
// A page now shows a message only when the server made it: the messages
// its own redirects carry are shown, a message written into a link is not.
func TestPageMessagesOnlyTheServers(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	client, csrf := ts.PageSignIn(users, "ana")
	page := func(path string) string {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	const forged = "Your session has expired: sign in again at evil.example"
	for _, path := range []string{"/files", "/signin", "/approvals"} {
		for _, q := range []string{"?msg=", "?msg_sig=AAAA&msg="} {
			if body := page(path + q + url.QueryEscape(forged)); strings.Contains(body, "evil.example") {
				t.Errorf("%s shows a message written into its link", path+q)
			}
		}
	}
	// The server's own message, after an upload, is shown.
	resp, err := ts.PageUpload(client, csrf, "mine.csv", []byte("x,y\n1,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "Uploaded mine.csv") {
		t.Errorf("the upload's own message is not shown")
	}
	// A signed message does not sign another.
	loc := resp.Request.URL.Query()
	loc.Set("msg", forged)
	if body := page("/files?" + loc.Encode()); strings.Contains(body, "evil.example") {
		t.Errorf("a message of the server's signature was shown with other words")
	}
}

// TestFilesPageCostsItsPage: with 3,000 files every files page took 2.9 s:
// the page read every file and each file's tables to show 25. A page now
// reads its own files only: with 8 times the files, a page costs about
// the same.
func TestFilesPageCostsItsPage(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it
	// would stretch (beside them it failed: 107 ms against 40 ms).
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	client, _ := ts.PageSignIn(users, "ana")
	add := func(n int) {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					if code, m := ts.Call(ana, "files.create", map[string]any{"filename": fmt.Sprintf("n%d.txt", i), "content": "x"}); code != http.StatusOK {
						t.Errorf("create: %d %v", code, m)
					}
				}
			})
		}
		wg.Wait()
	}
	// pageTime is the median time of the files page, sorted each way.
	pageTime := func() time.Duration {
		var times []time.Duration
		for _, order := range []string{"date", "name", "size", "rows", "date", "name", "size"} {
			start := time.Now()
			resp, err := client.Get(ts.URL + "/files?sort=" + order + "&offset=50")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			times = append(times, time.Since(start))
		}
		slices.Sort(times)
		return times[len(times)/2]
	}
	add(25)
	few := pageTime()
	add(175)
	many := pageTime()
	t.Logf("a files page: %v with 25 files, %v with 200", few, many)
	if many > 2*few+20*time.Millisecond {
		t.Errorf("a page of 25 files costs %v with 200 files against %v with 25: it reads more than its page", many, few)
	}
}
