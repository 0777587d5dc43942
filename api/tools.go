package api

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"

	"github.com/labstack/echo/v5"

	"datadesk"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// maxToolBody bounds a tool call's body: files.create may carry 100,000 rows.
const maxToolBody = 64 << 20

// Risk levels and approval modes of the tools' static metadata.
const (
	RiskRead   = "READ"
	RiskChange = "CHANGE"

	ApprovalNever  = "NEVER"
	ApprovalPolicy = "POLICY"
	ApprovalAlways = "ALWAYS"
)

// tool is a registered tool call: its metadata, exact input schema, and the
// function that runs it once the arguments are valid.
type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	RiskLevel    string          `json:"risk_level"`
	ApprovalMode string          `json:"approval_mode"`
	Enabled      bool            `json:"enabled"`

	schema *schema
	run    func(s *Server, c *echo.Context, args map[string]any) (any, error)
}

// toolSpecs are the registered tools with the texts chat platforms show
// their models.
var toolSpecs = []tool{
	{
		Name: "files.create",
		Description: "Create downloadable chat files owned by the current user. TXT/CSV/MD/JSON/DOCX use filename/content; ZIP uses existing owned file_ids. " +
			"For Excel XLSX or an interactive JSON/CSV table, use filename, columns (labels or key/label/type objects), and rows (arrays or objects); " +
			"preserve numbers as numbers and identifiers as strings. Or pass source_file_id of an owned CSV/XLS/XLSX/XLSM/table JSON to copy its data " +
			"internally without resending rows. XLSX opens as an interactive table in chat. Returns real file/download URLs, not the full dataset. " +
			"Does not run on a remote PC.",
		RiskLevel: RiskChange, ApprovalMode: ApprovalPolicy, Enabled: true,
		run: (*Server).toolFilesCreate,
	},
	{
		Name: "files.read",
		Description: "List the current user's stored files and download links, or return one existing file's download link by file_id " +
			"(documents, archives, photos). Defaults to this chat session; session_only=false lists the user's other files. " +
			"Does not read arbitrary server/endpoint paths. Reading one photo file_id also displays its image preview in chat; " +
			"CSV/Excel files display interactive tables.",
		RiskLevel: RiskRead, ApprovalMode: ApprovalNever, Enabled: true,
		run: (*Server).toolFilesRead,
	},
	{
		Name: "files.query_table",
		Description: "Query an owned stored table entirely on the server. Returns counts and aggregates; limit=0 (default) sends NO rows to the model, " +
			"up to 20 for details. Use exact column keys, filters are AND/case-insensitive. Identifiers stay text. sum/avg/min/max require numeric cells. " +
			"group_by groups server-side. show=true displays the complete resulting view in chat, regardless of preview limit. " +
			"Zero-row results return counts without an empty table/file. Use show=false while refining filters and show=true for the final view. " +
			"Derived views require files.create; reading/showing the original requires files.read. Reuse file_id returned by any module's table result. " +
			"No source-system query or LLM call.",
		RiskLevel: RiskRead, ApprovalMode: ApprovalNever, Enabled: true,
		run: (*Server).toolFilesQueryTable,
	},
}

// loadTools reads each tool's schema from the embedded copies of the
// project's exact schemas.
func loadTools() (map[string]*tool, error) {
	out := map[string]*tool{}
	for i := range toolSpecs {
		t := toolSpecs[i]
		raw, err := schemaFiles.ReadFile("schemas/" + t.Name + ".json")
		if err != nil {
			return nil, fmt.Errorf("api: schema of %s: %w", t.Name, err)
		}
		if t.schema, err = parseSchema(raw); err != nil {
			return nil, fmt.Errorf("api: schema of %s: %w", t.Name, err)
		}
		t.InputSchema = raw
		out[t.Name] = &t
	}
	return out, nil
}

func (s *Server) toolNames() []string {
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *Server) listTools(c *echo.Context) error {
	out := make([]*tool, 0, len(s.tools))
	for _, n := range s.toolNames() {
		out = append(out, s.tools[n])
	}
	return c.JSON(http.StatusOK, map[string]any{"tools": out})
}

// callTool is the one path every tool call takes: find the tool, decode and
// validate the arguments against its schema, check the caller may use it,
// run it. Each tool asks for any further permission its arguments need.
func (s *Server) callTool(c *echo.Context) error {
	name := c.Param("name")
	t, ok := s.tools[name]
	if !ok {
		return datadesk.Errorf(datadesk.NotFound, "no tool named %q", name).WithField("name").WithAllowed(s.toolNames()...)
	}
	if !t.Enabled {
		return datadesk.Errorf(datadesk.Forbidden, "tool %s is disabled", name)
	}
	args, err := decodeArguments(c.Request().Body)
	if err != nil {
		return err
	}
	if err := t.schema.validate("", args); err != nil {
		return err
	}
	if err := s.authorize(c, t.Name); err != nil {
		return err
	}
	result, err := t.run(s, c, args)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"result": result})
}

// decodeArguments reads {"arguments": {...}}, keeping numbers exact.
func decodeArguments(body io.Reader) (map[string]any, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxToolBody+1))
	if err != nil {
		return nil, datadesk.Errorf(datadesk.Invalid, "the request body could not be read").WithCause(err)
	}
	if len(raw) > maxToolBody {
		return nil, datadesk.Errorf(datadesk.TooLarge, "the request body is larger than %d bytes", maxToolBody)
	}
	var envelope map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&envelope); err != nil {
		return nil, datadesk.Errorf(datadesk.Invalid, "the body must be a JSON object {\"arguments\": {...}}: %v", err).WithField("arguments")
	}
	if dec.More() {
		return nil, datadesk.Errorf(datadesk.Invalid, "the body must hold one JSON object").WithField("arguments")
	}
	for k := range envelope {
		if k != "arguments" {
			return nil, datadesk.Errorf(datadesk.Invalid, "unknown body key %q; the body is {\"arguments\": {...}}", k).WithField(k).WithAllowed("arguments")
		}
	}
	args, ok := envelope["arguments"]
	if !ok || args == nil {
		return map[string]any{}, nil
	}
	m, ok := args.(map[string]any)
	if !ok {
		return nil, datadesk.Errorf(datadesk.Invalid, "arguments must be a JSON object").WithField("arguments")
	}
	return m, nil
}

// bindArguments copies validated arguments into a typed struct; numbers
// stay json.Number wherever the struct holds any.
func bindArguments(args map[string]any, dst any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return datadesk.Errorf(datadesk.Invalid, "arguments do not fit the tool: %v", err).WithField("arguments")
	}
	return nil
}
