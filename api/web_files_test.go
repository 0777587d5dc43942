package api

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPageFormsNeedCSRF: the files page's upload and delete forms change
// state only with the session's CSRF token.
func TestPageFormsNeedCSRF(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	ana := addUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	_, m := ts.upload(ana, "keep.csv", []byte("a,b\n1,2\n"))
	id := m["file"].(map[string]any)["id"].(string)
	client, csrf, _ := ts.signIn("ana", "correct horse battery")
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
		resp, err := client.Post(ts.url+"/files/upload", mw.FormDataContentType(), &b)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	del := func(token string) *http.Response {
		resp, err := client.PostForm(ts.url+"/files/"+id+"/delete", url.Values{"csrf_token": {token}})
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
	if _, m, _ := ts.do("GET", "/v1/files", ana, nil, ""); len(m["files"].([]any)) != 1 {
		t.Fatalf("files changed without a CSRF token: %v", m)
	}
	if resp := upload(csrf); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "Uploaded") {
		t.Errorf("upload with the token: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := del(csrf); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "Deleted") {
		t.Errorf("delete with the token: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, m, _ = ts.do("GET", "/v1/files", ana, nil, "")
	if files := m["files"].([]any); len(files) != 1 || files[0].(map[string]any)["filename"] != "new.csv" {
		t.Errorf("after upload and delete: %v", files)
	}
}
