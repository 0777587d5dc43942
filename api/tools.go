package api

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/api/serverdb"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/ingest"
	"datadesk/rbac"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// maxToolBody bounds a tool call's body: files.create may carry 100,000 rows.
const maxToolBody = 64 << 20

// maxToolAnswer bounds a tool's answer, which goes into a model's context:
// an answer past it is refused (413) with a hint, never cut silently.
const maxToolAnswer = 1 << 20

// Risk levels of the tools' static metadata.
const (
	RiskRead   = "READ"
	RiskChange = "CHANGE"
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

	schema *argSchema
	run    func(s *Server, call *toolCall, args map[string]any) (any, error)
}

// readOnly reports whether no call of the tool changes what an owner
// holds: a tool that may store a table (show) is not read-only, whatever
// its risk.
func (t *tool) readOnly() bool {
	var sc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &sc)
	_, stores := sc.Properties["show"]
	return t.RiskLevel == RiskRead && !stores
}

// analyzeTakes says what files.analyze_table takes beyond files.query_table's
// ops, for a query_table call refused for an op.
var analyzeTakes = map[string]string{
	"aggregates": "files.analyze_table's measures also take count_distinct, median, percentile, stddev and share, and min and max of dates and text",
	"filters":    "files.analyze_table's filters also take not_in, starts_with, ends_with, between, is_blank and OR groups (any)",
}

// check validates a call's arguments against the tool's schema. A
// files.query_table call refused for an op it does not take is pointed
// to files.analyze_table, which takes more.
func (t *tool) check(args map[string]any) error {
	err := t.schema.validate(args)
	if err == nil || t.Name != "files.query_table" {
		return err
	}
	e := datadesk.AsError(err)
	arg, _, _ := strings.Cut(e.Field, "[")
	if hint, ok := analyzeTakes[arg]; ok && strings.HasSuffix(e.Field, ".op") {
		return &datadesk.Error{Code: e.Code, Message: e.Message + "; " + hint, Field: e.Field, Allowed: e.Allowed, Err: e.Err}
	}
	return err
}

// floor is the tool's static metadata as the policy sees it.
func (t *tool) floor() rbac.Floor {
	return rbac.Floor{Enabled: t.Enabled, Approval: t.ApprovalMode}
}

// toolCall is one run of a tool: as whom, and whether a person approved it.
type toolCall struct {
	ctx      context.Context
	caller   datadesk.Caller
	approved bool
}

// errNeedsApproval is returned by a tool whose arguments need a further
// permission that the policy grants only with approval.
var errNeedsApproval = errors.New("needs approval")

// needsApproval is errNeedsApproval with the policy's reason, kept as a
// field rather than recovered from the error's text.
type needsApproval struct{ reason string }

func (e *needsApproval) Error() string { return errNeedsApproval.Error() + ": " + e.reason }

func (e *needsApproval) Is(target error) bool { return target == errNeedsApproval }

// authorize checks a further permission a call's arguments need. A denial
// is final; an approval requirement is met by an approved call and turns an
// unapproved one into a pending approval.
func (call *toolCall) authorize(s *Server, action string, attrs rbac.Attrs) error {
	d := s.policy.DecideAs(call.caller, action, attrs)
	switch {
	case d.Effect == rbac.Allow, d.Effect == rbac.Approve && call.approved:
		return nil
	case d.Effect == rbac.Approve:
		return &needsApproval{reason: d.Reason}
	}
	return datadesk.Errorf(datadesk.Forbidden, "%s may not use %s: %s", call.caller.Name, action, d.Reason)
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
		RiskLevel: RiskChange, ApprovalMode: rbac.ApprovalPolicy, Enabled: true,
		run: (*Server).toolFilesCreate,
	},
	{
		Name: "files.read",
		Description: "List the current user's stored files and download links, or return one existing file's download link by file_id " +
			"(documents, archives, photos). Defaults to this chat session; session_only=false lists the user's other files. " +
			"Does not read arbitrary server/endpoint paths. Reading one photo file_id also displays its image preview in chat; " +
			"CSV/Excel files display interactive tables.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true,
		run: (*Server).toolFilesRead,
	},
	{
		Name: "files.query_table",
		Description: "Query an owned stored table entirely on the server. Returns counts and aggregates; limit=0 (default) sends NO rows to the model, " +
			"up to 20 for details. Use exact column keys, filters are AND/case-insensitive. Identifiers stay text. sum/avg/min/max require numeric cells. " +
			"group_by groups server-side. show=true displays the complete resulting view in chat, regardless of preview limit. " +
			"Zero-row results return counts without an empty table/file. Use show=false while refining filters and show=true for the final view. " +
			"Derived views require files.create; reading/showing the original requires files.read. Reuse file_id returned by any module's table result. " +
			"No source-system query or LLM call. For time buckets, distinct counts, medians, percentiles, shares, the latest date (max of a date), " +
			"prefix or OR filters, use files.analyze_table.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true,
		run: (*Server).toolFilesQueryTable,
	},
	{
		Name: "files.analyze_table",
		Description: "Answer an analytic question about an owned stored table in one call, on the server, when files.query_table cannot: " +
			"time buckets, distinct counts, medians, percentiles, first/last values, shares, ratios, having, change and running totals, " +
			"rank and top N per group, OR filters, a lookup into another owned table. Returns counts and up to 50 groups; more, or " +
			"show=true, store the whole result as a table. Blank cells are empty. Notes say how ties and windows were treated.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true,
		run: (*Server).toolFilesAnalyzeTable,
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
		if raw, err = expandLists(raw); err != nil {
			return nil, fmt.Errorf("api: schema of %s: %w", t.Name, err)
		}
		if t.schema, err = compileArgSchema(t.Name, raw); err != nil {
			return nil, fmt.Errorf("api: schema of %s: %w", t.Name, err)
		}
		t.InputSchema = raw
		out[t.Name] = &t
	}
	return out, nil
}

// schemaLists are the lists a schema file takes from the catalog, where
// each is defined once: an "enum" written "@catalog.MeasureOps" is the
// catalog's list of measure ops.
var schemaLists = map[string][]string{
	"@catalog.MeasureOps":     catalog.MeasureOps,
	"@catalog.FilterOps":      catalog.FilterOps,
	"@catalog.HavingOps":      catalog.HavingOps,
	"@catalog.Buckets":        catalog.Buckets,
	"@catalog.TiesOptions":    catalog.TiesOptions,
	"@catalog.WindowsOptions": catalog.WindowsOptions,
}

// expandLists puts the catalog's lists in place of their names in a
// schema file; a name it does not know is an error, so a file cannot
// name a list that is not there.
func expandLists(raw []byte) ([]byte, error) {
	var err error
	out := schemaListName.ReplaceAllFunc(raw, func(m []byte) []byte {
		name := string(m[1 : len(m)-1])
		list, ok := schemaLists[name]
		if !ok {
			err = fmt.Errorf("no list named %s", name)
			return m
		}
		b, _ := json.Marshal(list)
		return b
	})
	return out, err
}

var schemaListName = regexp.MustCompile(`"@catalog\.[A-Za-z]+"`)

func (s *Server) toolNames() []string {
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *Server) listTools(c *echo.Context) error {
	if format := c.QueryParam("format"); format != "" {
		return s.listToolsAs(c, format)
	}
	out := make([]*tool, 0, len(s.tools))
	for _, n := range s.toolNames() {
		out = append(out, s.tools[n])
	}
	return c.JSON(http.StatusOK, map[string]any{"tools": out})
}

// callTool is the HTTP path of a tool call: find the tool by either
// spelling of its name, decode the arguments and hand them to invoke.
func (s *Server) callTool(c *echo.Context) error {
	t, err := s.lookupTool(c.Param("name"))
	if err != nil {
		return err
	}
	body, err := s.spool(c, caller(c).UserID)
	if err != nil {
		return err
	}
	defer body.Close()
	args, err := decodeArguments(body.SectionReader)
	if err != nil {
		return err
	}
	c.Set(actionKey, t.Name)
	// The audit records the arguments' hash, taken while the body is open.
	c.Set(argsHashKey, argsHash(args))
	out := s.invoke(c.Request().Context(), caller(c), t, args)
	if out.decided {
		c.Set(decisionKey, out.decision)
	}
	if out.err != nil {
		return out.err
	}
	if out.approval != nil {
		c.Set(approvalKey, out.approval.ID)
		return c.JSON(http.StatusAccepted, map[string]any{"approval": approvalAnswer(out.approval)})
	}
	return c.JSONBlob(http.StatusOK, append(append([]byte(`{"result":`), out.raw...), '}'))
}

// outcome is what one tool call came to: a result, a pending approval or an
// error, with the policy's decision when one was made.
type outcome struct {
	result   any
	raw      []byte // result as JSON, within maxToolAnswer
	approval *serverdb.Approval
	decision rbac.Decision
	decided  bool
	err      error
}

// invoke is the one path every tool call takes, over HTTP or MCP: validate
// the arguments against the tool's schema, check the caller may use it, run
// it. Each tool asks for any further permission its arguments need; a call
// that needs a person is stored as a pending approval. Each call is
// counted in the metrics by its outcome and time.
func (s *Server) invoke(ctx context.Context, who datadesk.Caller, t *tool, args map[string]any) outcome {
	start := time.Now()
	out := s.decideAndRun(ctx, who, t, args)
	s.metrics.observe(t.Name, out, time.Since(start))
	return out
}

// decideAndRun is invoke before it is counted.
func (s *Server) decideAndRun(ctx context.Context, who datadesk.Caller, t *tool, args map[string]any) outcome {
	if !t.Enabled {
		return outcome{err: datadesk.Errorf(datadesk.Forbidden, "tool %s is disabled", t.Name)}
	}
	if err := t.check(args); err != nil {
		return outcome{err: err}
	}
	attrs, err := workAttrs(ctx, s.engine, s.ingest, who.UserID, t, args)
	if err != nil {
		return outcome{err: err}
	}
	d := s.policy.DecideCallAs(who, t.Name, t.floor(), attrs)
	out := outcome{decision: d, decided: true}
	switch d.Effect {
	case rbac.Deny:
		out.err = datadesk.Errorf(datadesk.Forbidden, "%s may not use %s: %s", who.Name, t.Name, d.Reason)
		return out
	case rbac.Approve:
		out.approval, out.err = s.requestApproval(ctx, who, t, args, d.Reason)
		return out
	}
	call := &toolCall{ctx: ctx, caller: who}
	out.result, out.err = t.run(s, call, args)
	if na := (*needsApproval)(nil); errors.As(out.err, &na) {
		reason := na.reason
		out.approval, out.err = s.requestApproval(ctx, who, t, args, reason)
	}
	if out.err == nil && out.approval == nil {
		out.raw, out.err = encodeAnswer(out.result)
	}
	return out
}

// encodeAnswer encodes a tool's result within maxToolAnswer. Errors:
// too_large.
func encodeAnswer(result any) ([]byte, error) {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	if len(raw) > maxToolAnswer {
		return nil, datadesk.Errorf(datadesk.TooLarge, "the answer would have %d bytes; a tool answers at most %d: ask for fewer rows or columns",
			len(raw), maxToolAnswer)
	}
	return raw, nil
}

// callAttrs are the arguments' facts that policy conditions read.
func callAttrs(t *tool, args map[string]any) rbac.Attrs {
	a := rbac.Attrs{Tool: t.Name, Risk: t.RiskLevel}
	if rows := rowsArg(args); rows != nil {
		a.Rows = rows.Len()
	}
	if cols, ok := args["columns"].([]any); ok {
		a.Columns = len(cols)
	}
	if name, ok := args["filename"].(string); ok {
		// The format of the name the file is stored under: "x.zip ",
		// x.zip/ and x.zip with a Unicode space are all a ZIP.
		if clean, err := cleanFilename(name); err == nil {
			name = clean
		}
		a.Format = strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	}
	if ids, ok := args["file_ids"].([]any); ok {
		a.FileIDs = len(ids)
	}
	if f, ok := args["filters"].([]any); ok && len(f) > 0 {
		a.Derived = true
	}
	if g, ok := args["group_by"].([]any); ok && len(g) > 0 {
		a.Derived = true
	}
	a.Show, _ = args["show"].(bool)
	if n, ok := args["limit"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			a.Limit = int(v)
		}
	}
	return a
}

// decodeArguments reads {"arguments": {...}} from body, keeping numbers
// exact; the rows argument stays in body, read from there a row at a time
// (rowsArgument). Errors: invalid.
func decodeArguments(body *io.SectionReader) (map[string]any, error) {
	dec := newDecoder(body)
	var args map[string]any
	var unknown string
	err := readObject(dec, false, func(key string) error {
		if key != "arguments" {
			unknown = cmp.Or(unknown, key)
			return readValue(dec, new(json.RawMessage))
		}
		var err error
		args, err = readArguments(dec, body)
		return err
	})
	if err == nil {
		err = atEnd(dec)
	}
	var known *datadesk.Error
	switch {
	case errors.As(err, &known):
		return nil, known
	case errors.Is(err, errNotJSON):
		return nil, datadesk.Errorf(datadesk.Invalid, "the body must be one JSON object {\"arguments\": {...}}").WithField("arguments").WithCause(err)
	case err != nil:
		return nil, err
	case unknown != "":
		return nil, datadesk.Errorf(datadesk.Invalid, "unknown body key %q; the body is {\"arguments\": {...}}", unknown).WithField(unknown).WithAllowed("arguments")
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// spoolDir is where request bodies too large to hold are kept while their
// calls run.
func (s *Server) spoolDir() string { return filepath.Join(s.engine.Dir(), "spool") }

// decodeArgumentObject reads a call's arguments, a JSON object (absent or
// null for none), numbers kept exact; the rows argument stays JSON, read
// a row at a time (rowsArgument). Errors: invalid.
func decodeArgumentObject(raw []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	src := bytes.NewReader(raw)
	dec := newDecoder(src)
	args, err := readArguments(dec, src)
	if err == nil {
		err = atEnd(dec)
	}
	if errors.Is(err, errNotJSON) {
		return nil, notArguments(err)
	}
	return args, err
}

// readArguments reads the arguments object next in dec from src (null for
// none); a rows argument that is a list stays in src (readRows). Errors:
// invalid when it is not an object, errNotJSON when it is not JSON.
func readArguments(dec *json.Decoder, src io.ReaderAt) (map[string]any, error) {
	args := map[string]any{}
	err := readObject(dec, true, func(key string) error {
		if key == rowsArgument && nextByte(dec, src) == '[' {
			rows, err := readRows(dec, src)
			args[key] = rows
			return err
		}
		var v any
		err := readValue(dec, &v)
		args[key] = v
		return err
	})
	if errors.Is(err, errNotObject) {
		return nil, notArguments(err)
	}
	return args, err
}

// notArguments says that arguments were not a JSON object.
func notArguments(err error) error {
	return datadesk.Errorf(datadesk.Invalid, "arguments must be a JSON object").WithField("arguments").WithCause(err)
}

// maxArgumentDepth bounds how deep a call's arguments nest: the deepest
// the schemas allow (analysis filters in groups two levels down) is 9.
// Typed decoding of nested filters costs the size times the depth, so a
// small body nested a thousand levels took 0.3 s before being refused.
const maxArgumentDepth = 24

// argumentDepth is how deep v nests, counting objects and lists; it stops
// counting past limit.
func argumentDepth(v any, limit int) int {
	if limit <= 0 {
		return 1
	}
	deepest := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			deepest = max(deepest, argumentDepth(e, limit-1))
		}
	case []any:
		for _, e := range x {
			deepest = max(deepest, argumentDepth(e, limit-1))
		}
	default:
		return 0
	}
	return deepest + 1
}

// bindArguments copies validated arguments into a typed struct; numbers
// stay json.Number wherever the struct holds any. Errors: invalid (nested
// past maxArgumentDepth).
func bindArguments(args map[string]any, dst any) error {
	if argumentDepth(args, maxArgumentDepth+1) > maxArgumentDepth {
		return datadesk.Errorf(datadesk.Invalid, "the arguments nest more than %d levels deep; filters nest at most two groups", maxArgumentDepth).
			WithField("arguments")
	}
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return jsonBodyError(err, dst, "arguments")
	}
	return nil
}

// CheckCall says what the policy decides for a user calling a tool with
// arguments, without running it: the decision behind `datadesk policy
// check`. Like a real call, it reads the attributes from the work (a copy's
// source table, a ZIP's members) in the user's store. Errors: not_found
// (tool), invalid (arguments).
func CheckCall(ctx context.Context, p *rbac.Policy, eng *engine.Engine, user *rbac.User, toolName string, args map[string]any) (rbac.Decision, error) {
	tools, err := loadTools()
	if err != nil {
		return rbac.Decision{}, err
	}
	t, ok := tools[toolName]
	if !ok {
		// Not a tool: an HTTP action such as files.upload, decided as is.
		return p.Decide(user.Name, user.Role, toolName, rbac.Attrs{}), nil
	}
	if args == nil {
		args = map[string]any{}
	}
	if err := t.check(args); err != nil {
		return rbac.Decision{}, err
	}
	attrs, err := workAttrs(ctx, eng, ingest.New(ingest.Config{}), user.ID, t, args)
	if err != nil {
		return rbac.Decision{}, err
	}
	return p.DecideCall(user.Name, user.Role, t.Name, t.floor(), attrs), nil
}
