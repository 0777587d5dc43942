package api

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"datadesk"
)

// schema is the subset of JSON Schema the tool schemas use, plus their one
// extension: "source_expression": "scalar", a string, number, boolean or
// null. Validating by hand gives errors that name the argument and say what
// is allowed, which a general validator's messages do not.
type schema struct {
	Type                 any                `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties any                `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	AnyOf                []*schema          `json:"anyOf"`
	Enum                 []string           `json:"enum"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	Minimum              *json.Number       `json:"minimum"`
	Maximum              *json.Number       `json:"maximum"`
	Default              any                `json:"default"`
	SourceExpression     string             `json:"source_expression"`

	// typeNames are the JSON types the schema allows (types), named once
	// when it is parsed: they are asked for every value validated.
	typeNames []string
}

func parseSchema(raw []byte) (*schema, error) {
	var s schema
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	s.nameTypes()
	return &s, nil
}

// nameTypes sets typeNames in s and every schema inside it.
func (s *schema) nameTypes() {
	if s == nil {
		return
	}
	s.typeNames = s.allowedTypes()
	for _, p := range s.Properties {
		p.nameTypes()
	}
	s.Items.nameTypes()
	for _, alt := range s.AnyOf {
		alt.nameTypes()
	}
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
	if s.SourceExpression == "scalar" {
		return []string{"string", "number", "boolean", "null"}
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
	case []any, rowList:
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

// validateItems checks an array's length and items, reading one item at a
// time.
func (s *schema) validateItems(path string, items rowList) error {
	if s.MinItems != nil && items.Len() < *s.MinItems {
		return invalidArg(path, "has %d items; at least %d are needed", items.Len(), *s.MinItems)
	}
	if s.MaxItems != nil && items.Len() > *s.MaxItems {
		return invalidArg(path, "has %d items; at most %d are allowed", items.Len(), *s.MaxItems)
	}
	if s.Items == nil {
		return nil
	}
	return items.Each(func(i int, item any) error {
		// An item is checked under its list's path, which names the same
		// argument (argName), and again under its own only to say which
		// item is wrong: a path for each of millions of cells cost more
		// than checking them.
		if s.Items.validate(path, item) == nil {
			return nil
		}
		return s.Items.validate(fmt.Sprintf("%s[%d]", path, i), item)
	})
}

// validate checks v against s; path names v in messages ("filters[0].op").
func (s *schema) validate(path string, v any) error {
	if len(s.AnyOf) > 0 {
		var firstErr error
		var forms []string
		for _, alt := range s.AnyOf {
			if err := alt.validate(path, v); err == nil {
				return nil
			} else if typeAllows(alt.types(), v) && firstErr == nil {
				firstErr = err // the branch of the value's own type explains best
			}
			forms = append(forms, alt.describe())
		}
		if firstErr != nil {
			return firstErr
		}
		return invalidArg(path, "is %s; allowed: %s", jsonType(v), strings.Join(forms, " or ")).WithAllowed(forms...)
	}
	if types := s.types(); !typeAllows(types, v) {
		return invalidArg(path, "must be %s, not %s", strings.Join(types, " or "), jsonType(v)).WithAllowed(types...)
	}
	switch x := v.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength {
			if *s.MinLength == 1 {
				return invalidArg(path, "must not be empty")
			}
			return invalidArg(path, "must have at least %d characters", *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return invalidArg(path, "has %d characters; at most %d are allowed", n, *s.MaxLength)
		}
		if nameArgs[argName(path)] {
			if r, bad := datadesk.FirstUnsafeRune(x); bad {
				return invalidArg(path, "holds the character %U; names may not hold control or bidirectional-override characters", r)
			}
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, x) {
			return invalidArg(path, "is %q; allowed: %s", x, strings.Join(s.Enum, ", ")).WithAllowed(s.Enum...)
		}
	case json.Number:
		if s.Minimum == nil && s.Maximum == nil {
			// Most numbers, a table's cells among them, have no bounds:
			// parsing each exactly would be all the check's cost.
			break
		}
		f, _ := new(big.Rat).SetString(x.String())
		if s.Minimum != nil {
			if m, _ := new(big.Rat).SetString(s.Minimum.String()); f.Cmp(m) < 0 {
				return invalidArg(path, "is %s; it must be at least %s%s", x, s.Minimum, s.rangeHint())
			}
		}
		if s.Maximum != nil {
			if m, _ := new(big.Rat).SetString(s.Maximum.String()); f.Cmp(m) > 0 {
				return invalidArg(path, "is %s; it must be at most %s%s", x, s.Maximum, s.rangeHint())
			}
		}
	case []any:
		return s.validateItems(path, sliceRows(x))
	case rowList:
		return s.validateItems(path, x)
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return invalidArg(join(path, r), "is required")
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := s.Properties[k]
			if !ok {
				switch ap := s.AdditionalProperties.(type) {
				case bool:
					if !ap {
						allowed := s.propertyNames()
						return invalidArg(join(path, k), "is not a known argument; allowed: %s", strings.Join(allowed, ", ")).WithAllowed(allowed...)
					}
					continue
				case map[string]any:
					b, _ := json.Marshal(ap)
					sub, _ := parseSchema(b)
					if err := sub.validate(join(path, k), x[k]); err != nil {
						return err
					}
					continue
				}
				continue
			}
			if err := p.validate(join(path, k), x[k]); err != nil {
				return err
			}
		}
	}
	return nil
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
