package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"datadesk/api/apitest"
	"datadesk/rest"
	"datadesk/toolcall"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// providerNameRule is the tool-name rule both providers document:
//   - OpenAI, Chat Completions API reference, tools[].function.name: "Must be
//     a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length
//     of 64." (https://platform.openai.com/docs/api-reference/chat/create)
//   - Anthropic, "Define tools": a tool's name "must match the regex
//     ^[a-zA-Z0-9_-]{1,64}$"
//     (https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools)
//
// MCP (specification 2025-11-25, server/tools "Tool names") allows 1 to 128
// of the same characters plus "."; the stricter rule holds for all three.
var providerNameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestProviderFormats checks that each provider format names its tools by
// the providers' rule, that every schema compiles under the JSON Schema
// metaschema with no unknown keyword left, and that a standard validator
// now refuses an object as a filter value and takes what the schemas call a
// scalar.
func TestProviderFormats(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	for _, format := range []string{rest.FormatOpenAI, rest.FormatAnthropic, rest.FormatMCP} {
		t.Run(format, func(t *testing.T) {
			code, m, raw := ts.Do("GET", "/v1/tools?format="+format, token, nil, "")
			if code != http.StatusOK {
				t.Fatalf("got %d %s", code, raw)
			}
			if strings.Contains(string(raw), "source_expression") {
				t.Errorf("the %s definitions still carry source_expression", format)
			}
			tools := m["tools"].([]any)
			if len(tools) != 4 {
				t.Fatalf("got %d tools, want 4", len(tools))
			}
			names := m["names"].(map[string]any)
			for _, x := range tools {
				name, schema := providerParts(t, format, x.(map[string]any))
				if !providerNameRule.MatchString(name) {
					t.Errorf("name %q breaks ^[a-zA-Z0-9_-]{1,64}$", name)
				}
				toolName, _ := names[name].(string)
				if toolName == "" || toolcall.ProviderName(toolName) != name {
					t.Errorf("names maps %q to %q", name, toolName)
				}
				sch := compileSchema(t, schema)
				checkRestIsWritten(t, toolName, schema)
				if toolName == "files.query_table" {
					checkFilterValues(t, sch)
				}
			}
		})
	}
	code, m, _ := ts.Do("GET", "/v1/tools?format=gemini", token, nil, "")
	if code != http.StatusBadRequest || apitest.ErrCode(m) != "invalid" {
		t.Errorf("unknown format: got %d %v, want 400 invalid", code, m)
	}
}

// providerParts reads a tool's name and input schema out of one format.
func providerParts(t *testing.T, format string, tool map[string]any) (string, any) {
	t.Helper()
	switch format {
	case rest.FormatOpenAI:
		if tool["type"] != "function" {
			t.Errorf("openai tool type %v, want function", tool["type"])
		}
		fn := tool["function"].(map[string]any)
		return fn["name"].(string), fn["parameters"]
	case rest.FormatAnthropic:
		return tool["name"].(string), tool["input_schema"]
	}
	return tool["name"].(string), tool["inputSchema"]
}

// compileSchema compiles a schema as draft 2020-12, which validates it
// against the metaschema first.
func compileSchema(t *testing.T, schema any) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(apitest.MustJSON(schema)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("tool.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("tool.json")
	if err != nil {
		t.Fatalf("schema does not compile under the metaschema: %v", err)
	}
	return sch
}

// checkRestIsWritten checks that the emitted schema is the one written in
// toolcall/schemas/ (as the registry holds it), but for the scalar rewrite.
func checkRestIsWritten(t *testing.T, toolName string, schema any) {
	t.Helper()
	calls, err := toolcall.New(toolcall.Config{}, toolcall.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := calls.Lookup(toolName)
	if err != nil {
		t.Fatal(err)
	}
	written := []byte(tool.InputSchema)
	var want any
	if err := json.Unmarshal(toolcall.StandardSchema(written), &want); err != nil {
		t.Fatal(err)
	}
	if g, w := apitest.MustJSON(schema), apitest.MustJSON(want); g != w {
		t.Errorf("%s schema differs from the written one beyond the scalar rewrite:\n got %s\nwant %s", toolName, g, w)
	}
}

func checkFilterValues(t *testing.T, sch *jsonschema.Schema) {
	t.Helper()
	tests := []struct {
		value string
		ok    bool
	}{
		{`"North"`, true}, {`12345`, true}, {`10.5`, true}, {`true`, true}, {`["a", 1, false]`, true},
		{`{"x": 1}`, false}, {`[{"x": 1}]`, false}, {`[[1]]`, false},
	}
	for _, tc := range tests {
		args := `{"file_id": "f", "filters": [{"column": "c", "op": "eq", "value": ` + tc.value + `}]}`
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		err = sch.Validate(v)
		if (err == nil) != tc.ok {
			t.Errorf("filter value %s: valid=%v, want %v (%v)", tc.value, err == nil, tc.ok, err)
		}
	}
}

// TestToolNameAliases calls each tool by its provider name and gets the
// dotted tool's answer.
func TestToolNameAliases(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	args := map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "region", "op": "eq", "value": "north"}}}
	_, dotted := ts.Call(token, "files.query_table", args)
	code, aliased := ts.Call(token, "files_query_table", args)
	if code != http.StatusOK {
		t.Fatalf("files_query_table: got %d %v", code, aliased)
	}
	if g, w := apitest.MustJSON(aliased), apitest.MustJSON(dotted); g != w {
		t.Errorf("files_query_table answers %s, files.query_table %s", g, w)
	}
	if code, m := ts.Call(token, "files_read", map[string]any{}); code != http.StatusOK {
		t.Errorf("files_read: got %d %v", code, m)
	}
	body, _ := json.Marshal(map[string]any{"arguments": map[string]any{"filename": "a.txt", "content": "hi"}})
	if code, m, _ := ts.Do("POST", "/v1/tools/files_create", token, bytes.NewReader(body), "application/json"); code != http.StatusOK {
		t.Errorf("files_create: got %d %v", code, m)
	}
	if code, m := ts.Call(token, "files_delete", map[string]any{}); code != http.StatusNotFound || apitest.ErrCode(m) != "not_found" {
		t.Errorf("unknown tool: got %d %v, want 404", code, m)
	}
}
