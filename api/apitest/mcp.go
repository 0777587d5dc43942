package apitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Headers adds Headers to every request of an MCP HTTP client.
type Headers map[string]string

func (h Headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Bearer adds a token (and chat session chat-1) to every request of an MCP HTTP client.
type Bearer string

func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	r.Header.Set("X-Chat-Session-Id", "chat-1")
	return http.DefaultTransport.RoundTrip(r)
}

// MCPTransport is a client's way to the server for a token: streamable
// HTTP at /mcp ("http"), or a pipe to ServeMCP, the stdio command's
// server ("stdio").
func MCPTransport(t *testing.T, ts *Server, token, kind string) mcp.Transport {
	if kind == "http" {
		return &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: Bearer(token)}}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := ts.Server.ServeMCP(ctx, token, inR, outW); err != nil && ctx.Err() == nil {
			t.Errorf("ServeMCP: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-done })
	return &mcp.IOTransport{Reader: outR, Writer: inW}
}

// MCPTransports connect an MCP client for a token over each transport.
var MCPTransports = map[string]func(t *testing.T, ts *Server, token string) *mcp.ClientSession{
	"http": func(t *testing.T, ts *Server, token string) *mcp.ClientSession {
		return ConnectMCP(t, MCPTransport(t, ts, token, "http"))
	},
	"stdio": func(t *testing.T, ts *Server, token string) *mcp.ClientSession {
		return ConnectMCP(t, MCPTransport(t, ts, token, "stdio"))
	},
}

// ConnectMCP connects the SDK's client over tr.
func ConnectMCP(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	return ConnectMCPWith(t, tr, nil)
}

// ConnectMCPWith connects the SDK's client, with opts, over tr.
func ConnectMCPWith(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "datadesk-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// CallMCP calls a tool and returns its result and structured content.
func CallMCP(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var structured map[string]any
	if err := json.Unmarshal([]byte(MustJSON(res.StructuredContent)), &structured); err != nil {
		t.Fatal(err)
	}
	return res, structured
}

// TextOf is the text of a result's text parts, a line each.
func TextOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
