package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine"
)

// BenchmarkMCPAnalyze is one files_analyze_table call over MCP's
// streamable HTTP, from the SDK's client to the server, on a table of
// 2,000 rows.
func BenchmarkMCPAnalyze(b *testing.B) {
	ts, token, fileID := benchTable(b)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp",
		HTTPClient: &http.Client{Transport: apitest.Bearer(token)}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"file_id": fileID, "group_by": []any{"region"}, "measures": []any{map[string]any{"op": "sum", "column": "amount"}}}
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files_analyze_table", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
}

// benchTable is a server with a user's table of 2,000 rows of region and
// amount.
func benchTable(b *testing.B) (*apitest.Server, string, string) {
	ts := apitest.New(b, apitest.Options{Config: api.Config{MaxUpload: 1 << 20}, Engine: engine.Config{MemoryLimit: "256MB"}})
	users := ts.Users
	token := apitest.AddUser(b, users, "ana", "analyst")
	var csv strings.Builder
	csv.WriteString("region,amount\n")
	for i := range 2000 {
		fmt.Fprintf(&csv, "%s,%d\n", []string{"North", "South", "East"}[i%3], i)
	}
	code, up := ts.Upload(token, "orders.csv", []byte(csv.String()))
	if code != http.StatusCreated {
		b.Fatalf("upload: %d %v", code, up)
	}
	fileID := up["file"].(map[string]any)["id"].(string)
	return ts, token, fileID
}

// BenchmarkHTTPAnalyze is the same call as BenchmarkMCPAnalyze over
// POST /v1/tools/files.analyze_table.
func BenchmarkHTTPAnalyze(b *testing.B) {
	ts, token, fileID := benchTable(b)
	args := map[string]any{"file_id": fileID, "group_by": []any{"region"}, "measures": []any{map[string]any{"op": "sum", "column": "amount"}}}
	for b.Loop() {
		if code, m := ts.Call(token, "files.analyze_table", args); code != http.StatusOK {
			b.Fatalf("call: %d %v", code, m)
		}
	}
}
