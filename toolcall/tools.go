package toolcall

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/rbac"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// MaxBody bounds a tool call's body: files.create may carry 100,000 rows.
const MaxBody = 64 << 20

// MaxAnswer bounds a tool's answer, which goes into a model's context:
// an answer past it is refused (413) with a hint, never cut silently.
const MaxAnswer = 1 << 20

// Risk levels of the tools' static metadata.
const (
	RiskRead   = "READ"
	RiskChange = "CHANGE"
)

// Tool is a registered tool call: its metadata, exact input schema, and the
// function that runs it once the arguments are valid.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	RiskLevel    string          `json:"risk_level"`
	ApprovalMode string          `json:"approval_mode"`
	Enabled      bool            `json:"enabled"`

	schema *argSchema
	run    func(p *Pipeline, call *toolCall, args *Arguments) (any, error)
}

// ReadOnly reports whether no call of the tool changes what an owner
// holds: a tool that may store a table (show) is not read-only, whatever
// its risk.
func (t *Tool) ReadOnly() bool {
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
func (t *Tool) check(args *Arguments) error {
	err := t.schema.validate(args.values)
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
func (t *Tool) floor() rbac.Floor {
	return rbac.Floor{Enabled: t.Enabled, Approval: t.ApprovalMode}
}

// toolCall is one run of a tool: as whom, whether a person approved it,
// and the caller's store, acquired once for the call.
type toolCall struct {
	ctx      context.Context
	caller   datadesk.Caller
	approved bool
	store    *engine.Store
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
func (call *toolCall) authorize(p *Pipeline, action string, attrs rbac.Attrs) error {
	d := p.policy.DecideAs(call.caller, action, attrs)
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
var toolSpecs = []Tool{
	{
		Name: "files.create",
		Description: "Create downloadable chat files owned by the current user. TXT/CSV/MD/JSON/DOCX use filename/content; ZIP uses existing owned file_ids. " +
			"For Excel XLSX or an interactive JSON/CSV table, use filename, columns (labels or key/label/type objects), and rows (arrays or objects); " +
			"preserve numbers as numbers and identifiers as strings. Or pass source_file_id of an owned CSV/XLS/XLSX/XLSM/table JSON to copy its data " +
			"internally without resending rows. XLSX opens as an interactive table in chat. Returns real file/download URLs, not the full dataset. " +
			"Does not run on a remote PC.",
		RiskLevel: RiskChange, ApprovalMode: rbac.ApprovalPolicy, Enabled: true,
		run: (*Pipeline).toolFilesCreate,
	},
	{
		Name: "files.read",
		Description: "List the current user's stored files and download links, or return one existing file's download link by file_id " +
			"(documents, archives, photos). Defaults to this chat session; session_only=false lists the user's other files. " +
			"Does not read arbitrary server/endpoint paths. Reading one photo file_id also displays its image preview in chat; " +
			"CSV/Excel files display interactive tables.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true,
		run: (*Pipeline).toolFilesRead,
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
		run: (*Pipeline).toolFilesQueryTable,
	},
	{
		Name: "files.analyze_table",
		Description: "Answer in one call, on the server, what files.query_table cannot about an owned table: time buckets, measures such as " +
			"distinct counts, medians, shares, ratios, change and rank, having, top N per group, OR filters, a lookup into another table; " +
			"or read a file again naming its header rows (reading). Returns counts and up to 50 groups; more, or show=true, stores the " +
			"result as a table. Notes say how ties and windows ran.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true,
		run: (*Pipeline).toolFilesAnalyzeTable,
	},
}

// loadTools reads each tool's schema from the embedded copies of the
// project's exact schemas.
func loadTools() (map[string]*Tool, error) {
	out := map[string]*Tool{}
	for i := range toolSpecs {
		t := toolSpecs[i]
		raw, err := schemaFiles.ReadFile("schemas/" + t.Name + ".json")
		if err != nil {
			return nil, fmt.Errorf("toolcall: schema of %s: %w", t.Name, err)
		}
		if raw, err = expandLists(raw); err != nil {
			return nil, fmt.Errorf("toolcall: schema of %s: %w", t.Name, err)
		}
		if t.schema, err = compileArgSchema(t.Name, raw); err != nil {
			return nil, fmt.Errorf("toolcall: schema of %s: %w", t.Name, err)
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

// schemaTexts are the texts a schema file's descriptions take from the
// catalog: "@catalog.MeasureDocs" in a description is what the op table
// says of each measure op.
var schemaTexts = map[string]string{
	"@catalog.MeasureDocs":    catalog.MeasureDocs,
	"@catalog.OverGroupsDocs": catalog.OverGroupsDocs,
}

// expandLists puts the catalog's lists in place of their names (a whole
// string) in a schema file, and its texts in place of theirs in a
// string; a name it does not know is an error, so a file cannot name a
// list or a text that is not there.
func expandLists(raw []byte) ([]byte, error) {
	var err error
	out := schemaListName.ReplaceAllFunc(raw, func(m []byte) []byte {
		name := strings.Trim(string(m), `"`)
		if list, ok := schemaLists[name]; ok && len(m) == len(name)+2 {
			b, _ := json.Marshal(list)
			return b
		}
		text, ok := schemaTexts[name]
		if !ok {
			err = fmt.Errorf("no list or text named %s", name)
			return m
		}
		b, _ := json.Marshal(text)
		return []byte(strings.Replace(string(m), name, string(b[1:len(b)-1]), 1))
	})
	return out, err
}

var schemaListName = regexp.MustCompile(`"?@catalog\.[A-Za-z]+"?`)

// callAttrs are the arguments' facts that policy conditions read.
func callAttrs(t *Tool, args map[string]any) rbac.Attrs {
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
		if clean, err := datadesk.CleanFilename(name); err == nil {
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
