package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"

	"datadesk/rbac"
)

// Password is the password PageSignIn gives a user.
const Password = "correct horse battery"

// Get fetches a path (with query) and returns status and body.
func (ts *Server) Get(token, path string) (int, []byte) {
	ts.T.Helper()
	code, _, raw := ts.Do("GET", path, token, nil, "")
	return code, raw
}

// Call calls a tool over REST with its arguments.
func (ts *Server) Call(token, tool string, args any) (int, map[string]any) {
	ts.T.Helper()
	body, _ := json.Marshal(map[string]any{"arguments": args})
	code, m, _ := ts.Do("POST", "/v1/tools/"+tool, token, bytes.NewReader(body), "application/json")
	return code, m
}

// Declare posts a table's declaration to /v1/tables.
func (ts *Server) Declare(token string, body map[string]any) (int, map[string]any) {
	ts.T.Helper()
	b, _ := json.Marshal(body)
	code, m, _ := ts.Do("POST", "/v1/tables", token, bytes.NewReader(b), "application/json")
	return code, m
}

// As sends a request as a platform token acting for a user.
func (ts *Server) As(method, path, token, onBehalf string, body any) (int, map[string]any) {
	ts.T.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, ts.URL+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	if onBehalf != "" {
		req.Header.Set("X-On-Behalf-Of", onBehalf)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.T.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// NewJar is an empty cookie jar.
func NewJar() *cookiejar.Jar {
	j, _ := cookiejar.New(nil)
	return j
}

// SignIn signs in with a password and returns a client holding the cookie,
// the CSRF token and the answer.
func (ts *Server) SignIn(name, pw string) (*http.Client, string, *http.Response) {
	ts.T.Helper()
	client := &http.Client{Jar: NewJar()}
	body, _ := json.Marshal(map[string]string{"name": name, "password": pw})
	resp, err := client.Post(ts.URL+"/v1/session", "application/json", bytes.NewReader(body))
	if err != nil {
		ts.T.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	csrf, _ := m["csrf_token"].(string)
	return client, csrf, resp
}

// PageSignIn gives a user Password and signs in to the web page.
func (ts *Server) PageSignIn(users *rbac.Users, name string) (*http.Client, string) {
	ts.T.Helper()
	if err := users.SetPassword(name, Password); err != nil {
		ts.T.Fatal(err)
	}
	client, csrf, resp := ts.SignIn(name, Password)
	if resp.StatusCode != 200 {
		ts.T.Fatalf("sign in: %d", resp.StatusCode)
	}
	return client, csrf
}

// SignInAs posts a sign-in from the client address a trusted proxy names.
func (ts *Server) SignInAs(from, name, pw string) *http.Response {
	ts.T.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "password": pw})
	req, _ := http.NewRequest("POST", ts.URL+"/v1/session", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if from != "" {
		req.Header.Set("X-Forwarded-For", from)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.T.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// PageUpload sends a file by the files page's upload form, with the
// session's CSRF token before it as the page sends it.
func (ts *Server) PageUpload(client *http.Client, csrf, name string, content []byte) (*http.Response, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("csrf_token", csrf)
	w, _ := mw.CreateFormFile("file", name)
	w.Write(content)
	mw.Close()
	return client.Post(ts.URL+"/files/upload", mw.FormDataContentType(), &b)
}
