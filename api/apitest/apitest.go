// Package apitest runs the real server over httptest for the surfaces'
// tests: one Options struct says what the server is given (its limits,
// policy, engine settings, clock), New starts it on a fresh data
// directory, and Scenario tables describe requests and what their answers
// must hold, as pocketbase's tests.ApiScenario does.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"datadesk/answers"
	"datadesk/api"
	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// Options say how a test server is made. The zero value is a server with
// the default policy, the server's default limits and a small engine, in a
// new folder of the test's.
type Options struct {
	// Config is the server's configuration; its DataDir is set to the data
	// directory, and a fixed signing key is used when it has none.
	Config api.Config
	// MaxUpload, when not 0, overrides Config.MaxUpload (when both are 0,
	// the server's api.DefaultMaxUpload).
	MaxUpload int64
	// Policy is the policy's text (rbac.DefaultPolicy when empty).
	Policy string
	// Engine configures the engine; its Dir, when empty, is a new folder
	// of the test's, and an empty MemoryLimit or MaxTempSize is 256MB or
	// 1GB.
	Engine engine.Config
	// Answers is the answers' cache the server keeps read-only calls'
	// answers in; nil keeps none.
	Answers *answers.Cache
}

// Server is a running test server.
type Server struct {
	T testing.TB
	// URL is the server's base address, Dir its data directory.
	URL string
	Dir string
	// Server is the server itself, Users its users, Engine the engine it
	// serves owners' data from.
	Server *api.Server
	Users  *rbac.Users
	Engine *engine.Engine
}

// New runs the real server over httptest as opts say, and closes it when
// the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	cfg, ecfg := opts.Config, opts.Engine
	if opts.MaxUpload != 0 {
		cfg.MaxUpload = opts.MaxUpload
	}
	policyText := opts.Policy
	if policyText == "" {
		policyText = rbac.DefaultPolicy
	}
	if ecfg.MemoryLimit == "" {
		ecfg.MemoryLimit = "256MB"
	}
	if ecfg.MaxTempSize == "" {
		ecfg.MaxTempSize = "1GB"
	}
	dir := ecfg.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	ecfg.Dir = dir
	eng, err := engine.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	users, err := rbac.OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The policy is read from files, as the server does, so a test can
	// change it while the server runs.
	if err := rbac.WriteDefaults(filepath.Join(dir, "policy")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy", "policy.csv"), []byte(policyText), 0o600); err != nil {
		t.Fatal(err)
	}
	policy, err := rbac.OpenPolicy(filepath.Join(dir, "policy"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SigningKey == nil {
		cfg.SigningKey = bytes.Repeat([]byte("k"), 32)
	}
	system, err := serverdb.Open(context.Background(), eng.Dir())
	if err != nil {
		t.Fatal(err)
	}
	audit, err := rbac.OpenAudit(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = dir
	srv, err := api.New(cfg, api.Deps{Engine: eng, System: system, Ingest: ingest.New(ingest.Config{}),
		Users: users, Policy: policy, Audit: audit, Answers: opts.Answers})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); eng.Close(); system.Close(); audit.Close() })
	return &Server{T: t, URL: hs.URL, Dir: dir, Server: srv, Users: users, Engine: eng}
}

// AddUser adds a user with a role and returns its token.
func AddUser(t testing.TB, users *rbac.Users, name, role string) string {
	t.Helper()
	_, token, err := users.Add(name, role)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// AddUser adds a user of the server with a role and returns its token.
func (ts *Server) AddUser(name, role string) string {
	ts.T.Helper()
	return AddUser(ts.T, ts.Users, name, role)
}

// Do sends a request with a bearer token (none when empty) in chat
// session chat-1 and returns the status, the body read as a JSON object
// (nil when it is not one) and the raw body.
func (ts *Server) Do(method, path, token string, body io.Reader, contentType string) (int, map[string]any, []byte) {
	ts.T.Helper()
	req, err := http.NewRequest(method, ts.URL+path, body)
	if err != nil {
		ts.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("X-Chat-Session-Id", "chat-1")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw
}

// DoJSON sends body encoded as JSON.
func (ts *Server) DoJSON(method, path, token string, body any) (int, map[string]any, []byte) {
	ts.T.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		ts.T.Fatal(err)
	}
	return ts.Do(method, path, token, bytes.NewReader(raw), "application/json")
}

// Upload posts a file to /v1/files.
func (ts *Server) Upload(token, filename string, content []byte) (int, map[string]any) {
	ts.T.Helper()
	var b bytes.Buffer
	return ts.UploadWith(token, filename, content, "", &b)
}

// UploadWith uploads with a query (?header_row=...), building the body in b.
func (ts *Server) UploadWith(token, filename string, content []byte, query string, b *bytes.Buffer) (int, map[string]any) {
	ts.T.Helper()
	mw := multipart.NewWriter(b)
	w, _ := mw.CreateFormFile("file", filename)
	w.Write(content)
	mw.Close()
	code, m, _ := ts.Do("POST", "/v1/files"+query, token, b, mw.FormDataContentType())
	return code, m
}

// ErrCode is the code of an error answer's body, "" when it has none.
func ErrCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// MustJSON is v encoded as JSON, "" for values JSON cannot encode (a
// test sending one sees the server's answer to an empty body).
func MustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
