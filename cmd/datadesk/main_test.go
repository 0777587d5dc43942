package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/cluster"
	"datadesk/rbac"
)

func TestUserAddPrintsTokenLast(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"user", "add", "bob", "--role", "viewer", "--data", dir}, &out, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	token := lines[len(lines)-1]
	users, _ := rbac.OpenUsers(dir)
	u, err := users.Authenticate(token)
	if err != nil || u.Name != "bob" || u.Role != "viewer" {
		t.Fatalf("last line %q is not bob's token: %v %v", token, u, err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "users.json"))
	if strings.Contains(string(raw), token) {
		t.Errorf("the token is stored in clear")
	}
	if err := run([]string{"user", "add", "bob", "--data", dir}, &out, &out); err == nil {
		t.Errorf("a second bob was added")
	}
}

func TestIngestPrintsReport(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.csv")
	os.WriteFile(p, []byte("zip,n\n02139,1\n10001,2\n"), 0o600)
	var out bytes.Buffer
	if err := run([]string{"ingest", p}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Tables []struct {
			RowsStored int64 `json:"rows_stored"`
			Columns    []struct{ Key, Type, Reason string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	c := rep.Tables[0].Columns[0]
	if rep.Tables[0].RowsStored != 2 || c.Type != "text" || !strings.Contains(c.Reason, "leading zero") {
		t.Errorf("report %s", out.String())
	}
	if strings.Contains(out.String(), "peak_memory_mib") {
		t.Errorf("the peak memory is reported unasked: %s", out.String())
	}

	// --memory adds the process's peak memory, which the bench reads.
	out.Reset()
	if err := run([]string{"ingest", "--memory", p}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var mem struct {
		Peak float64 `json:"peak_memory_mib"`
	}
	if err := json.Unmarshal(out.Bytes(), &mem); err != nil || mem.Peak <= 0 {
		t.Errorf("peak memory %v (%v) in %s", mem.Peak, err, out.String())
	}
}

// TestIngestHeaderRow: ingest finds a workbook's table under its notes,
// and --header-row (with --sheet) names the header instead.
func TestIngestHeaderRow(t *testing.T) {
	p := filepath.Join("..", "..", "ingest", "testdata", "public", "deaths.xlsx")
	read := func(args ...string) []map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := run(append(append([]string{"ingest"}, args...), p), &out, &out); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		var rep struct{ Tables []map[string]any }
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		return rep.Tables
	}
	found := read()
	if found[0]["header_row"] != float64(5) || found[0]["rows_stored"] != float64(10) || found[0]["header_asked"] != nil {
		t.Errorf("found: %v", found[0])
	}
	asked := read("--header-row", "4", "--sheet", "other")
	if asked[1]["header_row"] != float64(4) || asked[1]["header_asked"] != true || asked[1]["rows_stored"] != float64(11) {
		t.Errorf("asked for sheet other: %v", asked[1])
	}
	if asked[0]["header_row"] != float64(5) {
		t.Errorf("sheet arts, not asked: %v", asked[0])
	}
	var out bytes.Buffer
	if err := run([]string{"ingest", "--header-row", "2000", p}, &out, &out); err == nil || !strings.Contains(err.Error(), "header_row must be") {
		t.Errorf("--header-row 2000: %v", err)
	}
}

func TestPolicyCheckAndPasswd(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	for _, u := range [][2]string{{"ana", "analyst"}, {"vic", "viewer"}} {
		if err := run([]string{"user", "add", u[0], "--role", u[1], "--data", dir}, &out, &out); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ana", "files.create", `{"filename": "a.csv", "columns": ["a"], "rows": [[1]]}`}, "allow\npolicy rule: role:analyst, files.create, true"},
		{[]string{"vic", "files.create", `{"filename": "a.zip", "file_ids": ["f_x"]}`}, "approve\npolicy rule: role:viewer, files.create, r.attrs.Format == 'zip'"},
		{[]string{"vic", "files.upload"}, "deny\nno policy rule"},
		{[]string{"ana", "files.read"}, "allow\npolicy rule: role:viewer, files.read"},
	}
	for _, tc := range tests {
		out.Reset()
		if err := run(append([]string{"policy", "check"}, append(tc.args, "--data", dir)...), &out, &out); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !strings.HasPrefix(out.String(), tc.want) {
			t.Errorf("%v: got %q, want %q", tc.args, out.String(), tc.want)
		}
	}
	if err := run([]string{"policy", "check", "ana", "files.query_table", `{"nope": 1}`, "--data", dir}, &out, &out); err == nil {
		t.Errorf("invalid arguments accepted")
	}
	if err := userPasswd([]string{"ana", "--data", dir}, strings.NewReader("correct horse battery\n"), &out); err != nil {
		t.Fatal(err)
	}
	users, _ := rbac.OpenUsers(dir)
	if _, err := users.CheckPassword(context.Background(), "ana", "correct horse battery"); err != nil {
		t.Errorf("password not set: %v", err)
	}
	out.Reset()
	if err := run([]string{"audit", "--data", dir}, &out, &out); err != nil || out.Len() != 0 {
		t.Errorf("empty audit: %v %q", err, out.String())
	}
}

// TestLogLevelFlag: serve and mcp take --log-level; an unknown level is
// refused before anything opens.
func TestLogLevelFlag(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--log-level", "loud", "--data", t.TempDir()},
		{"mcp", "--log-level", "loud", "--token", "x", "--data", t.TempDir()},
	} {
		var out bytes.Buffer
		if err := run(args, &out, &out); err == nil || !strings.Contains(err.Error(), "--log-level") {
			t.Errorf("%s: got %v, want the level refused", args[0], err)
		}
	}
	if l, err := newLogger(io.Discard, "DEBUG"); err != nil || !l.Enabled(context.Background(), slog.LevelDebug) {
		t.Errorf("debug: %v", err)
	}
}

// TestProxyRulesPrintsTheRules: `datadesk proxy rules` prints the alerting
// rules the cluster package's promtool tests check, whole.
func TestProxyRulesPrintsTheRules(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"proxy", "rules"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != cluster.AlertRules || !strings.Contains(out.String(), "alert: DatadeskNodeMarkedDown") {
		t.Errorf("proxy rules printed %d bytes, want the %d of cluster.AlertRules", out.Len(), len(cluster.AlertRules))
	}
}
