package toolcall

import (
	"encoding/json"
	"regexp"
	"strings"
)

// ProviderName is a tool's name as OpenAI, Anthropic and MCP clients take
// it: every "." becomes "_", since their names allow only letters, digits,
// "_" and "-" (files.query_table is files_query_table). No two registered
// names map to one, and Lookup resolves either spelling.
func ProviderName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// scalarExtension matches the tool schemas' one extension keyword as a
// whole subschema.
var scalarExtension = regexp.MustCompile(`\{\s*"source_expression"\s*:\s*"scalar"\s*\}`)

// standardScalar is the standard JSON Schema for what the schemas call a
// scalar. null is left out: a filter value of null is refused (is_null
// takes true or false), so offering it would only invite a failing call.
const standardScalar = `{"type": ["string", "number", "integer", "boolean"]}`

// StandardSchema rewrites the schemas' "source_expression": "scalar" as
// standard JSON Schema and leaves every other byte of the schema as it is.
func StandardSchema(raw []byte) json.RawMessage {
	return json.RawMessage(scalarExtension.ReplaceAll(raw, []byte(standardScalar)))
}
