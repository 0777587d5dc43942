package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
)

// Provider formats of GET /v1/tools?format=.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
	FormatMCP       = "mcp"
)

// ProviderName is a tool's name as OpenAI, Anthropic and MCP clients take
// it: every "." becomes "_", since their names allow only letters, digits,
// "_" and "-" (files.query_table is files_query_table). No two registered
// names map to one, and lookupTool resolves either spelling.
func ProviderName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// scalarExtension matches the tool schemas' one extension keyword as a
// whole subschema.
var scalarExtension = regexp.MustCompile(`\{\s*"source_expression"\s*:\s*"scalar"\s*\}`)

// standardScalar is the standard JSON Schema for what the schemas call a
// scalar. null is left out: a filter value of null is refused (is_null
// takes true or false), so offering it would only invite a failing call.
const standardScalar = `{"type": ["string", "number", "integer", "boolean"]}`

// standardSchema rewrites the schemas' "source_expression": "scalar" as
// standard JSON Schema and leaves every other byte of the schema as it is.
func standardSchema(raw []byte) json.RawMessage {
	return json.RawMessage(scalarExtension.ReplaceAll(raw, []byte(standardScalar)))
}

// lookupTool finds a tool by its registered name or its provider name.
// Errors: not_found, listing the names.
func (s *Server) lookupTool(name string) (*tool, error) {
	if t, ok := s.tools[name]; ok {
		return t, nil
	}
	for _, t := range s.tools {
		if ProviderName(t.Name) == name {
			return t, nil
		}
	}
	return nil, datadesk.Errorf(datadesk.NotFound, "no tool named %q", name).WithField("name").WithAllowed(s.toolNames()...)
}

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
func (s *Server) listToolsAs(c *echo.Context, format string) error {
	names := map[string]string{}
	out := []any{}
	for _, n := range s.toolNames() {
		t := s.tools[n]
		if !t.Enabled {
			continue
		}
		pn := ProviderName(t.Name)
		names[pn] = t.Name
		schema := standardSchema(t.InputSchema)
		switch format {
		case FormatOpenAI:
			out = append(out, openAITool{Type: "function", Function: openAIFunction{Name: pn, Description: t.Description, Parameters: schema}})
		case FormatAnthropic:
			out = append(out, anthropicTool{Name: pn, Description: t.Description, InputSchema: schema})
		case FormatMCP:
			out = append(out, mcpTool{Name: pn, Title: t.Name, Description: t.Description, InputSchema: schema,
				Annotations: mcpAnnotations{ReadOnlyHint: t.readOnly()}})
		default:
			return datadesk.Errorf(datadesk.Invalid, "unknown format %q", format).WithField("format").
				WithAllowed(FormatOpenAI, FormatAnthropic, FormatMCP)
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"format": format, "tools": out, "names": names,
		"call": "POST /v1/tools/{name} with either name, body {\"arguments\": {...}}"})
}
