package apitest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Scenario is one request and what its answer must hold. Scenarios of a
// table share a server (Run) or each start their own (Test with a nil
// server), and run in parallel unless Serial says not to.
type Scenario struct {
	Name   string
	Method string
	// URL is the path and query, from the server's root.
	URL string
	// Body is the request's body, sent with ContentType (application/json
	// when Body is set and ContentType is not).
	Body        string
	ContentType string
	// Token is the caller's bearer token (none when empty); Headers are
	// set on top (X-Chat-Session-Id is chat-1 unless they say otherwise).
	Token   string
	Headers map[string]string
	// Options make the scenario's own server when it is run without one.
	Options Options
	// ExpectedStatus is the answer's status; ExpectedCode, ExpectedField
	// and ExpectedMessage, when set, the error's code, the argument it
	// names and a fragment of its message, as decoded from the body.
	ExpectedStatus  int
	ExpectedCode    string
	ExpectedField   string
	ExpectedMessage string
	// ExpectedContent are fragments the body must hold, NotExpectedContent
	// fragments it must not.
	ExpectedContent    []string
	NotExpectedContent []string
	// Before runs before the request, After on the answer (its body
	// already read into body).
	Before func(t testing.TB, ts *Server)
	After  func(t testing.TB, ts *Server, res *http.Response, body []byte)
	// Serial keeps the scenario from running beside others: say why where
	// it is set.
	Serial bool
}

// Run runs each scenario as a subtest against ts (or, when ts is nil, its
// own server).
func Run(t *testing.T, ts *Server, scenarios []Scenario) {
	t.Helper()
	for _, s := range scenarios {
		s.Test(t, ts)
	}
}

// Test runs the scenario as a subtest named after it, against ts or, when
// ts is nil, a new server made with its Options.
func (s Scenario) Test(t *testing.T, ts *Server) {
	t.Helper()
	name := s.Name
	if name == "" {
		name = s.Method + " " + s.URL
	}
	t.Run(name, func(t *testing.T) {
		if !s.Serial {
			t.Parallel()
		}
		if ts == nil {
			ts = New(t, s.Options)
		}
		if s.Before != nil {
			s.Before(t, ts)
		}
		var body io.Reader
		if s.Body != "" {
			body = strings.NewReader(s.Body)
		}
		req, err := http.NewRequest(s.Method, ts.URL+s.URL, body)
		if err != nil {
			t.Fatal(err)
		}
		if s.Token != "" {
			req.Header.Set("Authorization", "Bearer "+s.Token)
		}
		req.Header.Set("X-Chat-Session-Id", "chat-1")
		switch {
		case s.ContentType != "":
			req.Header.Set("Content-Type", s.ContentType)
		case s.Body != "":
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range s.Headers {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if s.ExpectedStatus != 0 && res.StatusCode != s.ExpectedStatus {
			t.Errorf("status: got %d, want %d; body %s", res.StatusCode, s.ExpectedStatus, raw)
		}
		var answer struct {
			Error struct{ Code, Field, Message string }
		}
		_ = json.Unmarshal(raw, &answer)
		if s.ExpectedCode != "" && answer.Error.Code != s.ExpectedCode {
			t.Errorf("error code: got %q, want %q; body %s", answer.Error.Code, s.ExpectedCode, raw)
		}
		if s.ExpectedField != "" && answer.Error.Field != s.ExpectedField {
			t.Errorf("error field: got %q, want %q; body %s", answer.Error.Field, s.ExpectedField, raw)
		}
		if s.ExpectedMessage != "" && !strings.Contains(answer.Error.Message, s.ExpectedMessage) {
			t.Errorf("error message %q does not say %q", answer.Error.Message, s.ExpectedMessage)
		}
		for _, f := range s.ExpectedContent {
			if !strings.Contains(string(raw), f) {
				t.Errorf("body lacks %q: %s", f, raw)
			}
		}
		for _, f := range s.NotExpectedContent {
			if strings.Contains(string(raw), f) {
				t.Errorf("body holds %q: %s", f, raw)
			}
		}
		if s.After != nil {
			s.After(t, ts, res, raw)
		}
	})
}
