package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"datadesk"
)

// argSchema checks a tool's arguments with a standard JSON Schema
// validator (draft 2020-12) and words its first error as one that names
// the argument and says what is allowed, which the validator's own
// messages do not. The rows argument is checked a row at a time against
// its items' schema, so that a call's rows are never held as Go values.
type argSchema struct {
	whole *jsonschema.Schema
	row   *jsonschema.Schema // one row's schema; nil when the tool takes no rows
	tree  *schema            // the schema as written, read to word errors

	// typesOnly says the row schema constrains only JSON types (type,
	// items, anyOf, additionalProperties), so that whether a row of
	// scalars is valid follows from its kind and the set of its cells'
	// types: a row like one already found valid need not be checked
	// again (rowShape).
	typesOnly bool
}

// writtenScalar is what the schemas' one extension, "source_expression":
// "scalar", means, as standard JSON Schema: a string, number, boolean or
// null. A null filter value is taken here so that the check after it can
// point to is_null; the schemas offered to providers leave null out
// (standardScalar).
const writtenScalar = `{"type": ["string", "number", "boolean", "null"]}`

// compileArgSchema compiles a tool's schema as written.
func compileArgSchema(name string, raw []byte) (*argSchema, error) {
	raw = scalarExtension.ReplaceAll(raw, []byte(writtenScalar))
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	a := &argSchema{}
	if a.whole, err = c.Compile(url); err != nil {
		return nil, err
	}
	if a.tree, err = parseSchema(raw); err != nil {
		return nil, err
	}
	if rows := a.tree.Properties[RowsArgument]; rows != nil && rows.Items != nil {
		if rows.MinItems != nil {
			// The rows stand in as an empty list while the rest is checked.
			return nil, fmt.Errorf("toolcall: %s: %s may not have minItems", name, RowsArgument)
		}
		if a.row, err = c.Compile(url + "#/properties/" + RowsArgument + "/items"); err != nil {
			return nil, err
		}
		var whole struct {
			Properties map[string]struct {
				Items any `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &whole); err != nil {
			return nil, err
		}
		a.typesOnly = constrainsTypesOnly(whole.Properties[RowsArgument].Items)
	}
	return a, nil
}

// constrainsTypesOnly says whether the schema s (decoded JSON) asks of a
// value only its JSON type and its members' types, never "integer" (a
// number's integer-ness is not a type a row's shape records).
func constrainsTypesOnly(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return s == true
	}
	for k, v := range m {
		switch k {
		case "description", "title":
		case "type":
			if list, _ := v.([]any); v == "integer" || slices.Contains(list, any("integer")) {
				return false
			}
		case "items", "additionalProperties":
			if !constrainsTypesOnly(v) {
				return false
			}
		case "anyOf":
			alts, _ := v.([]any)
			for _, alt := range alts {
				if !constrainsTypesOnly(alt) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// rowShape is a row's kind and the set of its cells' JSON types, or 0
// for a row that holds something other than scalars.
func rowShape(row any) uint8 {
	var shape uint8
	var cells func(v any) bool
	cells = func(v any) bool {
		switch v.(type) {
		case string:
			shape |= 1
		case json.Number:
			shape |= 2
		case bool:
			shape |= 4
		case nil:
			shape |= 8
		default:
			return false
		}
		return true
	}
	switch r := row.(type) {
	case []any:
		shape = 16
		for _, v := range r {
			if !cells(v) {
				return 0
			}
		}
	case map[string]any:
		shape = 32
		for _, v := range r {
			if !cells(v) {
				return 0
			}
		}
	}
	return shape
}

// validate checks a call's arguments. Errors: invalid, naming the
// argument.
func (a *argSchema) validate(args map[string]any) error {
	doc := args
	rows, streamed := args[RowsArgument].(RowList)
	if streamed {
		doc = maps.Clone(args)
		doc[RowsArgument] = []any{}
	}
	if err := a.whole.Validate(doc); err != nil {
		return a.explain("", doc, err)
	}
	if streamed && a.row != nil {
		if err := a.validateRows(rows); err != nil {
			return err
		}
	}
	return checkNames("", doc)
}

// validateRows checks the rows' count and each row.
func (a *argSchema) validateRows(rows RowList) error {
	if max := a.tree.Properties[RowsArgument].MaxItems; max != nil && rows.Len() > *max {
		return invalidArg(RowsArgument, "has %d items; at most %d are allowed", rows.Len(), *max)
	}
	var valid [64]bool // by rowShape, when the schema asks only types
	return rows.Each(func(i int, row any) error {
		var shape uint8
		if a.typesOnly {
			if shape = rowShape(row); valid[shape] && shape != 0 {
				return nil
			}
		}
		if err := a.row.Validate(row); err != nil {
			return a.explain(fmt.Sprintf("%s[%d]", RowsArgument, i), row, err)
		}
		valid[shape] = true
		return nil
	})
}

// explain words the validator's error about root, the value found at
// base ("" for the arguments).
func (a *argSchema) explain(base string, root any, err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return datadesk.Errorf(datadesk.Invalid, "arguments are not valid: %v", err)
	}
	e := first(ve)
	node := a.tree.at(fragment(e.SchemaURL))
	v, path := locate(root, base, e.InstanceLocation)
	if _, ok := e.ErrorKind.(*kind.AnyOf); ok {
		return a.explainAnyOf(base, root, e, node, v, path)
	}
	return word(e.ErrorKind, node, v, path)
}

// explainAnyOf words a value no alternative takes: by the alternative of
// the value's own type, which explains best, or else by the forms allowed.
func (a *argSchema) explainAnyOf(base string, root any, e *jsonschema.ValidationError, node *schema, v any, path string) error {
	forms := make([]string, 0, len(node.AnyOf))
	for i, alt := range node.AnyOf {
		if typeAllows(alt.types(), v) {
			prefix := e.SchemaURL + "/anyOf/" + strconv.Itoa(i)
			for _, c := range e.Causes {
				if c.SchemaURL == prefix || strings.HasPrefix(c.SchemaURL, prefix+"/") {
					return a.explain(base, root, c)
				}
			}
		}
		forms = append(forms, alt.describe())
	}
	return invalidArg(path, "is %s; allowed: %s", jsonType(v), strings.Join(forms, " or ")).WithAllowed(forms...)
}

// word says what one error of kind k means for v at path, node being the
// schema that refused it.
func word(k jsonschema.ErrorKind, node *schema, v any, path string) error {
	switch k := k.(type) {
	case *kind.Type:
		types := node.types()
		return invalidArg(path, "must be %s, not %s", strings.Join(types, " or "), jsonType(v)).WithAllowed(types...)
	case *kind.Enum:
		got := jsonType(v)
		if s, ok := v.(string); ok {
			got = strconv.Quote(s)
		}
		return invalidArg(path, "is %s; allowed: %s", got, strings.Join(node.Enum, ", ")).WithAllowed(node.Enum...)
	case *kind.Required:
		return invalidArg(join(path, k.Missing[0]), "is required")
	case *kind.AdditionalProperties:
		allowed := node.propertyNames()
		return invalidArg(join(path, slices.Min(k.Properties)), "is not a known argument; allowed: %s", strings.Join(allowed, ", ")).WithAllowed(allowed...)
	case *kind.MinLength:
		if k.Want == 1 {
			return invalidArg(path, "must not be empty")
		}
		return invalidArg(path, "must have at least %d characters", k.Want)
	case *kind.MaxLength:
		return invalidArg(path, "has %d characters; at most %d are allowed", k.Got, k.Want)
	case *kind.MinItems:
		return invalidArg(path, "has %d items; at least %d are needed", k.Got, k.Want)
	case *kind.MaxItems:
		return invalidArg(path, "has %d items; at most %d are allowed", k.Got, k.Want)
	case *kind.Minimum:
		return invalidArg(path, "is %v; it must be at least %s%s", v, node.Minimum, node.rangeHint())
	case *kind.Maximum:
		return invalidArg(path, "is %v; it must be at most %s%s", v, node.Maximum, node.rangeHint())
	}
	return invalidArg(path, "is not allowed: %s", k.LocalizedString(english))
}

var english = message.NewPrinter(language.English)

// first is the error to report of those the validator found: a missing
// argument before any other, then the first in the arguments' order (keys
// sorted, items in order). An anyOf is worded as a whole.
func first(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for {
		if _, ok := e.ErrorKind.(*kind.AnyOf); ok || len(e.Causes) == 0 {
			return e
		}
		best := e.Causes[0]
		for _, c := range e.Causes[1:] {
			if before(c, best) {
				best = c
			}
		}
		e = best
	}
}

func before(a, b *jsonschema.ValidationError) bool {
	_, ra := a.ErrorKind.(*kind.Required)
	_, rb := b.ErrorKind.(*kind.Required)
	if ra != rb {
		return ra
	}
	pa, pb := errorPath(a), errorPath(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea == nil && eb == nil {
			return na < nb
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}

// errorPath is where an error points: its value's location, and the
// unknown argument's name for one.
func errorPath(e *jsonschema.ValidationError) []string {
	if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		return append(slices.Clip(e.InstanceLocation), slices.Min(k.Properties))
	}
	return e.InstanceLocation
}

// locate finds the value at loc inside root and names it as messages do
// ("filters[0].op"), base naming root.
func locate(root any, base string, loc []string) (any, string) {
	v, path := root, base
	for _, tok := range loc {
		switch x := v.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			path = fmt.Sprintf("%s[%d]", path, i)
			if i >= 0 && i < len(x) {
				v = x[i]
			} else {
				v = nil
			}
		case map[string]any:
			path, v = join(path, tok), x[tok]
		default:
			path, v = join(path, tok), nil
		}
	}
	return v, path
}

// fragment is the JSON pointer a schema location ends in, as tokens.
func fragment(url string) []string {
	_, ptr, _ := strings.Cut(url, "#")
	ptr = strings.TrimPrefix(ptr, "/")
	if ptr == "" {
		return nil
	}
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		toks[i] = pointerEscapes.Replace(t)
	}
	return toks
}

// pointerEscapes undo a JSON pointer token's escapes (RFC 6901).
var pointerEscapes = strings.NewReplacer("~1", "/", "~0", "~")

// checkNames refuses, in the arguments that name something (nameArgs),
// the characters datadesk.UnsafeNameRune refuses. The rows' cells are
// values, not names, and are not looked at.
func checkNames(path string, v any) error {
	switch x := v.(type) {
	case string:
		if nameArgs[argName(path)] {
			if r, bad := datadesk.FirstUnsafeRune(x); bad {
				return invalidArg(path, "holds the character %U; names may not hold control or bidirectional-override characters", r)
			}
		}
	case []any:
		for i, item := range x {
			if err := checkNames(fmt.Sprintf("%s[%d]", path, i), item); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if path != "" || k != RowsArgument {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := checkNames(join(path, k), x[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// schema is a tool schema as written, read to word the validator's
// errors: the types, bounds and forms a value was refused by.
type schema struct {
	Type                 any                `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	AnyOf                []*schema          `json:"anyOf"`
	Enum                 []string           `json:"enum"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	Minimum              *json.Number       `json:"minimum"`
	Maximum              *json.Number       `json:"maximum"`

	typeNames []string // the types the schema allows, named once
	extra     *schema  // additionalProperties when it is a schema
}

func parseSchema(raw []byte) (*schema, error) {
	var s schema
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return &s, s.prepare()
}

// prepare names the types of s and every schema inside it.
func (s *schema) prepare() error {
	if s == nil {
		return nil
	}
	s.typeNames = s.allowedTypes()
	if len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{' {
		var err error
		if s.extra, err = parseSchema(s.AdditionalProperties); err != nil {
			return err
		}
	}
	for _, p := range s.Properties {
		if err := p.prepare(); err != nil {
			return err
		}
	}
	for _, alt := range s.AnyOf {
		if err := alt.prepare(); err != nil {
			return err
		}
	}
	return s.Items.prepare()
}

// at is the schema at a JSON pointer's tokens below s; s itself when the
// pointer leads nowhere it knows.
func (s *schema) at(toks []string) *schema {
	cur := s
	for i := 0; i < len(toks) && cur != nil; i++ {
		var next *schema
		switch toks[i] {
		case "properties":
			if i+1 < len(toks) {
				i++
				next = cur.Properties[toks[i]]
			}
		case "anyOf":
			if i+1 < len(toks) {
				i++
				if n, err := strconv.Atoi(toks[i]); err == nil && n < len(cur.AnyOf) {
					next = cur.AnyOf[n]
				}
			}
		case "items":
			next = cur.Items
		case "additionalProperties":
			next = cur.extra
		}
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}

// types returns the JSON types s allows, none for any.
func (s *schema) types() []string { return s.typeNames }

func (s *schema) allowedTypes() []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// jsonType names the JSON type of a value decoded with UseNumber.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any, RowList:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func typeAllows(types []string, v any) bool {
	if len(types) == 0 {
		return true
	}
	t := jsonType(v)
	for _, want := range types {
		if want == t || want == "number" && t == "integer" {
			return true
		}
		if want == "integer" && t == "number" {
			// 3.0 is an integer in JSON Schema.
			if r, ok := new(big.Rat).SetString(v.(json.Number).String()); ok && r.IsInt() {
				return true
			}
		}
	}
	return false
}

func invalidArg(path, format string, args ...any) *datadesk.Error {
	if path == "" {
		path = "arguments"
	}
	return datadesk.Errorf(datadesk.Invalid, "argument %s "+format, append([]any{path}, args...)...).WithField(path)
}

func (s *schema) rangeHint() string {
	if s.Minimum != nil && s.Maximum != nil {
		return fmt.Sprintf(" (allowed: %s to %s)", s.Minimum, s.Maximum)
	}
	return ""
}

func (s *schema) propertyNames() []string {
	out := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// describe names the form a schema allows, for anyOf messages.
func (s *schema) describe() string {
	types := s.types()
	switch {
	case len(types) == 1 && types[0] == "object" && len(s.Required) > 0:
		return "an object with " + strings.Join(s.Required, " and ")
	case len(types) == 1 && types[0] == "array" && s.Items != nil:
		return "an array of " + s.Items.describe()
	case len(types) > 0:
		return strings.Join(types, " or ")
	}
	return "any value"
}

// nameArgs are the arguments that name something people read or the
// database keys on (files, sheets, columns, aggregates, ids): they may not
// hold the characters datadesk.UnsafeNameRune refuses. Cell values and
// content may.
var nameArgs = map[string]bool{"filename": true, "title": true, "key": true, "label": true, "name": true, "column": true,
	"columns": true, "group_by": true, "sort_by": true, "file_id": true, "file_ids": true, "source_file_id": true,
	"measure": true, "of": true, "within": true, "per": true, "by": true, "lookup_column": true}

// argName is the argument a path ends in: "columns[2].key" is "key",
// "group_by[0]" is "group_by".
func argName(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
