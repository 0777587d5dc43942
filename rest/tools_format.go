package rest

import (
	"encoding/json"
	"net/http"

	"datadesk"
	"datadesk/toolcall"

	"github.com/labstack/echo/v5"
)

// Provider formats of GET /v1/tools?format=.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
	FormatMCP       = "mcp"
)

// openAITool is a Chat Completions function tool.
type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// anthropicTool is a Messages API custom tool.
type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// mcpTool is an MCP tools/list entry.
type mcpTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations mcpAnnotations  `json:"annotations"`
}

type mcpAnnotations struct {
	ReadOnlyHint bool `json:"readOnlyHint"`
}

// listToolsAs answers GET /v1/tools?format=: the enabled tools as one
// provider's API takes them, and the mapping from provider names back to
// the registered ones. Errors: invalid (format).
func (h *Handler) listToolsAs(c *echo.Context, format string) error {
	names := map[string]string{}
	out := []any{}
	for _, t := range h.d.Calls.Tools() {
		if !t.Enabled {
			continue
		}
		pn := toolcall.ProviderName(t.Name)
		names[pn] = t.Name
		schema := toolcall.StandardSchema(t.InputSchema)
		switch format {
		case FormatOpenAI:
			out = append(out, openAITool{Type: "function", Function: openAIFunction{Name: pn, Description: t.Description, Parameters: schema}})
		case FormatAnthropic:
			out = append(out, anthropicTool{Name: pn, Description: t.Description, InputSchema: schema})
		case FormatMCP:
			out = append(out, mcpTool{Name: pn, Title: t.Name, Description: t.Description, InputSchema: schema,
				Annotations: mcpAnnotations{ReadOnlyHint: t.ReadOnly()}})
		default:
			return datadesk.Errorf(datadesk.Invalid, "unknown format %q", format).WithField("format").
				WithAllowed(FormatOpenAI, FormatAnthropic, FormatMCP)
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"format": format, "tools": out, "names": names,
		"call": "POST /v1/tools/{name} with either name, body {\"arguments\": {...}}"})
}
