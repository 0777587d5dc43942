package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain doubles as the datadesk command when a test runs it as a child.
func TestMain(m *testing.M) {
	if os.Getenv("DATADESK_TEST_COMMAND") == "1" {
		if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestMCPCommand runs `datadesk mcp` as a process and talks to it over its
// stdin and stdout with the SDK's client: the tools list, files.create and
// a query of the file it made.
func TestMCPCommand(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"user", "add", "ana", "--role", "analyst", "--data", dir}, &out, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	token := lines[len(lines)-1]

	cmd := exec.Command(os.Args[0], "mcp", "--data", dir)
	cmd.Env = append(os.Environ(), "DATADESK_TEST_COMMAND=1", "DATADESK_TOKEN="+token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "datadesk-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 5 {
		t.Fatalf("tools: %v %v", err, tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "files_create", Arguments: map[string]any{
		"filename": "orders.csv", "columns": []any{"order_id", "amount"},
		"rows": []any{[]any{"00012345", 10.5}, []any{"00012346", 4}}}})
	if err != nil || res.IsError {
		t.Fatalf("files_create: %v %v\n%s", err, res, stderr.String())
	}
	var created struct{ File struct{ ID string } }
	json.Unmarshal([]byte(mustJSON(res.StructuredContent)), &created)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "files_query_table", Arguments: map[string]any{
		"file_id": created.File.ID, "aggregates": []any{map[string]any{"op": "sum", "column": "amount"}}}})
	if err != nil || res.IsError {
		t.Fatalf("files_query_table: %v %v", err, res)
	}
	var q struct {
		Matched    int            `json:"matched_row_count"`
		Aggregates map[string]any `json:"aggregates"`
	}
	json.Unmarshal([]byte(mustJSON(res.StructuredContent)), &q)
	if q.Matched != 2 || q.Aggregates["sum_amount"] != 14.5 {
		t.Errorf("query: %s", mustJSON(res.StructuredContent))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMCPCommandNeedsToken: without a token the command refuses to start.
func TestMCPCommandNeedsToken(t *testing.T) {
	t.Setenv("DATADESK_TOKEN", "")
	var out bytes.Buffer
	err := run([]string{"mcp", "--data", t.TempDir()}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("got %v, want a token error", err)
	}
}

// TestDataDirectoryInUse: `serve` and `mcp` on a data directory another
// process holds say so and exit non-zero, instead of failing later or
// crashing.
func TestDataDirectoryInUse(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"user", "add", "ana", "--role", "analyst", "--data", dir}, &out, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	token := lines[len(lines)-1]
	holder := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--data", dir)
	holder.Env = append(os.Environ(), "DATADESK_TEST_COMMAND=1")
	logPath := filepath.Join(t.TempDir(), "holder.log")
	holderOut, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer holderOut.Close()
	holder.Stdout, holder.Stderr = holderOut, holderOut
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		log, _ := os.ReadFile(logPath)
		if strings.Contains(string(log), `"msg":"serving"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first server did not start: %s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--data", dir},
		{"mcp", "--data", dir, "--token", token},
	} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "DATADESK_TEST_COMMAND=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdin = strings.NewReader("")
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("%s: got %v, want a non-zero exit\n%s", args[0], err, stderr.String())
		}
		if msg := stderr.String(); !strings.Contains(msg, "in use by process") || strings.Contains(msg, "panic") {
			t.Errorf("%s: stderr %q, want the lock error naming the process", args[0], msg)
		}
	}
}
