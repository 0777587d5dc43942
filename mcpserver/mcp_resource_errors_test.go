package mcpserver_test

import (
	"context"
	"datadesk/api/apitest"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPResourceErrorsKeepTheirCode: a resources/read refused for its
// arguments came back as a bare error text, the error model's code, field
// and allowed values lost. It is now a JSON-RPC error of invalid params
// whose data holds them, as an HTTP answer's error does.
func TestMCPResourceErrorsKeepTheirCode(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, up := ts.Upload(token, "t.csv", []byte("a,b\n1,2\n"))
	if code != 201 {
		t.Fatalf("upload: %d %v", code, up)
	}
	table := up["file"].(map[string]any)["table_id"].(string)
	for name, connect := range apitest.MCPTransports {
		t.Run(name, func(t *testing.T) {
			cs := connect(t, ts, token)
			_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "datadesk://tables/" + table + "?offset=-1"})
			var we *jsonrpc.Error
			if !errors.As(err, &we) {
				t.Fatalf("a bad offset: %v (%T), want a JSON-RPC error", err, err)
			}
			var data struct {
				Code  string `json:"code"`
				Field string `json:"field"`
			}
			if json.Unmarshal(we.Data, &data) != nil || we.Code != jsonrpc.CodeInvalidParams || data.Code != "invalid" || data.Field != "offset" {
				t.Errorf("a bad offset: code %d, data %s", we.Code, we.Data)
			}
		})
	}
}
