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
	"datadesk/ingest"
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

// Tool is a registered tool call: its metadata, exact input schema, and
// the value that runs it once the arguments are valid.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	RiskLevel    string          `json:"risk_level"`
	ApprovalMode string          `json:"approval_mode"`
	Enabled      bool            `json:"enabled"`

	schema *argSchema
	impl   tool
}

// tool is what one tool does, a value in the tool's own file, registered
// once (registry): its metadata and its run. What a tool does beyond
// that it says through the small interfaces below, each optional.
type tool interface {
	// spec is the tool's metadata; its schema is schemas/<name>.json.
	spec() Tool
	// run runs a call whose arguments are valid, as call's caller.
	run(p *Pipeline, call *toolCall, args *Arguments) (any, error)
}

// workReader is a tool whose attributes for the policy are read from the
// work as well as from the call (workAttrs): a copy's source table, an
// analysis's tables. open acquires the owner's store at its first use.
type workReader interface {
	workAttrs(ctx context.Context, open func() (*engine.Store, error), in *ingest.Ingester, args *Arguments, a rbac.Attrs) (rbac.Attrs, error)
}

// refusalWording is a tool that words a refusal of its arguments further,
// pointing to what takes them.
type refusalWording interface {
	reword(err *datadesk.Error) error
}

// answerer is a tool that says what its answer holds: the parts of a
// result an approver sees (summaryKeys: counts and names, never rows,
// aggregates or links), and the answer as text a model can act on when its
// host passes it nothing else (text).
type answerer interface {
	summaryKeys() []string
	text(r map[string]any, budget int) string
}

// registry are the tools, one line each.
var registry = []tool{
	filesCreate{},
	filesRead{},
	filesQueryTable{},
	filesAnalyzeTable{},
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

// check validates a call's arguments against the tool's schema, worded
// further by the tool when it does (refusalWording).
func (t *Tool) check(args *Arguments) error {
	err := t.schema.validate(args.values)
	if rw, ok := t.impl.(refusalWording); ok && err != nil {
		return rw.reword(datadesk.AsError(err))
	}
	return err
}

// run runs a call whose arguments are valid.
func (t *Tool) run(p *Pipeline, call *toolCall, args *Arguments) (any, error) {
	return t.impl.run(p, call, args)
}

// Text is a tool's result r (its answer decoded) as text within budget
// bytes: counts, small aggregates, names and links, the rows as far as
// they fit; the data itself is in the answer.
func (t *Tool) Text(r map[string]any, budget int) string {
	text := "The result is in the structured content."
	if a, ok := t.impl.(answerer); ok {
		text = a.text(r, budget)
	}
	return clip(text, budget)
}

// summaryKeys are the parts of the tool's result an approver sees.
func (t *Tool) summaryKeys() []string {
	if a, ok := t.impl.(answerer); ok {
		return a.summaryKeys()
	}
	return nil
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

// loadTools reads each tool's schema from the embedded copies of the
// project's exact schemas.
func loadTools() (map[string]*Tool, error) {
	out := map[string]*Tool{}
	for _, impl := range registry {
		t := impl.spec()
		t.impl = impl
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
