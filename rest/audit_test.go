package rest_test

import (
	"bytes"
	"net/http"
	"testing"

	"datadesk/api/apitest"
	"datadesk/rbac"
)

// TestToolCallRecordedOnce checks that the pipeline and the HTTP
// middleware do not both record a tool call: each call, whatever it came
// to, is one entry with the tool's name, a body that is not JSON among
// them (the pipeline reads the arguments, and records the failure).
func TestToolCallRecordedOnce(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	calls := []struct {
		args    any
		outcome string
		status  float64
	}{
		{map[string]any{"file_id": fileID}, "ok", 200},
		{map[string]any{"file_id": fileID, "nope": 1}, "invalid", 400},
		{map[string]any{"file_id": "f_missing"}, "not_found", 404},
	}
	for _, c := range calls {
		ts.Call(token, "files.query_table", c.args)
	}
	if code, _, _ := ts.Do("POST", "/v1/tools/files.query_table", token, bytes.NewReader([]byte("{")), "application/json"); code != http.StatusBadRequest {
		t.Fatalf("a body that is not JSON: %d", code)
	}
	entries, err := rbac.ReadAudit(ts.Dir, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []rbac.Entry
	for _, e := range entries {
		if e.Action == "files.query_table" {
			got = append(got, e)
		}
	}
	if len(got) != len(calls)+1 {
		t.Fatalf("%d entries for %d calls: %+v", len(got), len(calls)+1, got)
	}
	// Newest first: the body that was not JSON, then the calls backwards.
	if got[0].Outcome != "invalid" || got[0].Status != 400 || got[0].ArgsSHA256 != "" {
		t.Errorf("the call that was not JSON: %+v", got[0])
	}
	for i, c := range calls {
		e := got[len(calls)-i]
		if e.Outcome != c.outcome || float64(e.Status) != c.status || e.ArgsSHA256 == "" || e.UserID == "" || e.DurationMS < 0 {
			t.Errorf("call %d: %+v, want %s %v", i, e, c.outcome, c.status)
		}
		if c.outcome == "ok" && e.Decision != rbac.Allow {
			t.Errorf("call %d: decision %q", i, e.Decision)
		}
	}
}
