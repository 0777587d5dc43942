package mcpserver_test

import (
	"context"
	"datadesk/api"
	"datadesk/api/apitest"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressSeen collects the progress notifications an MCP client gets.
type progressSeen struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
}

func (p *progressSeen) add(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.notes = append(p.notes, req.Params)
	p.mu.Unlock()
}

func (p *progressSeen) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), p.notes...)
}

// connectWithProgress connects the SDK's client over streamable HTTP or a
// pipe to the stdio server, collecting progress notifications in seen.
func connectWithProgress(t *testing.T, ts *apitest.Server, token, transport string, seen *progressSeen) *mcp.ClientSession {
	t.Helper()
	return apitest.ConnectMCPWith(t, apitest.MCPTransport(t, ts, token, transport), &mcp.ClientOptions{ProgressNotificationHandler: seen.add})
}

// TestMCPProgress: a tool call that runs longer than the server's
// ProgressAfter sends the progress notifications its client asked for
// (a progressToken), as the SDK's own client sees them over streamable
// HTTP and stdio: each of the call's token, its progress increasing, its
// stage named. A call that asks for none gets none, and so does one
// shorter than the default second.
func TestMCPProgress(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 4 << 20, MCPProgressAfter: 2 * time.Millisecond}})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	rows := make([]any, 20000)
	for i := range rows {
		rows[i] = []any{i, fmt.Sprintf("r%d", i), float64(i) / 4}
	}
	create := func(name string) map[string]any {
		return map[string]any{"filename": name + ".csv", "columns": []any{"n", "label", "amount"}, "rows": rows}
	}
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			seen := &progressSeen{}
			cs := connectWithProgress(t, ts, ana, transport, seen)
			token := "create-" + transport
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files_create", Arguments: create(token), Meta: mcp.Meta{"progressToken": token}})
			if err != nil || res.IsError {
				t.Fatalf("files_create: %v %s", err, apitest.TextOf(res))
			}
			var notes []*mcp.ProgressNotificationParams
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if notes = seen.all(); len(notes) > 0 {
					break
				}
			}
			if len(notes) == 0 {
				t.Fatal("no progress notification for a call that asked for them")
			}
			last := 0.0
			stages := map[string]bool{}
			for _, n := range notes {
				if n.ProgressToken != token || n.Progress <= last || n.Message == "" {
					t.Errorf("notification %+v after progress %v, want token %s, progress increasing, a stage", n, last, token)
				}
				last = n.Progress
				stages[strings.Split(n.Message, " (")[0]] = true
			}
			if !stages["running files.create"] && !stages["writing the answer"] && !stages["weighing the call for the policy"] {
				t.Errorf("stages told: %v", stages)
			}
			// Without a token, nothing: every notification is the first
			// call's.
			if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files_create", Arguments: create("quiet-" + transport)}); err != nil || res.IsError {
				t.Fatalf("files_create: %v", err)
			}
			for _, n := range seen.all() {
				if n.ProgressToken != token {
					t.Errorf("a notification of token %v, for a call that asked for none", n.ProgressToken)
				}
			}
		})
	}
	t.Run("none within the first second", func(t *testing.T) {
		t.Parallel()
		quick := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
		users := quick.Users
		bob := apitest.AddUser(t, users, "bob", "analyst")
		seen := &progressSeen{}
		cs := connectWithProgress(t, quick, bob, "http", seen)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files_create",
			Arguments: map[string]any{"filename": "a.txt", "content": "hello"}, Meta: mcp.Meta{"progressToken": 7}})
		if err != nil || res.IsError {
			t.Fatalf("files_create: %v", err)
		}
		if n := len(seen.all()); n != 0 {
			t.Errorf("%d notifications for a call shorter than a second", n)
		}
	})
}
