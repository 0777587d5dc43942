package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"datadesk/engine/typing"
)

// filters checks the filter tree: the top list is AND-ed, and a node's any
// or all nest up to two levels.
func (c *checker) filters(nodes []FilterNode) (*Bool, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	return c.filterList("filters", nodes, false, 0)
}

func (c *checker) filterList(field string, nodes []FilterNode, or bool, depth int) (*Bool, error) {
	b := &Bool{Or: or}
	for i, n := range nodes {
		f := fmt.Sprintf("%s[%d]", field, i)
		groups := 0
		if n.Any != nil {
			groups++
		}
		if n.All != nil {
			groups++
		}
		switch {
		case groups > 0 && (n.Column != "" || n.Op != "" || n.Value != nil):
			return nil, qerr(f, "a filter is a condition (column, op, value) or a group (any or all), not both")
		case groups == 2:
			return nil, qerr(f, "a group has any or all, not both")
		case groups == 1:
			if depth >= 2 {
				return nil, qerr(f, "groups nest at most two levels")
			}
			kids, sub, kidOr := n.All, f+".all", false
			if n.Any != nil {
				kids, sub, kidOr = n.Any, f+".any", true
			}
			if len(kids) == 0 {
				return nil, qerr(sub, "a group needs at least one filter")
			}
			k, err := c.filterList(sub, kids, kidOr, depth+1)
			if err != nil {
				return nil, err
			}
			b.Kids = append(b.Kids, k)
		default:
			if c.conds++; c.conds > MaxAnalysisConds {
				return nil, qerr(f, "at most %d conditions are allowed in all", MaxAnalysisConds)
			}
			col, err := c.column(f+".column", n.Column)
			if err != nil {
				return nil, err
			}
			cond, err := checkAnalysisFilter(f, col, n)
			if err != nil {
				return nil, err
			}
			b.Conds = append(b.Conds, cond)
		}
	}
	return b, nil
}

// checkAnalysisFilter checks one condition: query_table's ops, and
// not_in, starts_with, ends_with, between and is_blank.
func checkAnalysisFilter(field string, c *Column, n FilterNode) (Cond, error) {
	cond := Cond{Col: *c, Op: n.Op, Field: field}
	if !slices.Contains(FilterOps, n.Op) {
		return cond, qerr(field+".op", "unknown op %q", n.Op).WithAllowed(FilterOps...)
	}
	vfield := field + ".value"
	switch n.Op {
	case "not_in":
		in, err := checkFilter(field, c, Filter{Column: n.Column, Op: "in", Value: n.Value})
		in.Op = "not_in"
		return in, err
	case "starts_with", "ends_with":
		if n.Value == nil {
			return cond, qerr(vfield, "%s takes a value", n.Op)
		}
		if _, isList := n.Value.([]any); isList {
			return cond, qerr(vfield, "%s takes one value", n.Op)
		}
		cond.Text = ValueText(n.Value)
		return cond, nil
	case "between":
		list, ok := n.Value.([]any)
		if !ok || len(list) != 2 {
			return cond, qerr(vfield, "between takes [low, high], both included")
		}
		if c.Type == typing.TypeBoolean {
			return cond, qerr(field+".op", "between does not apply to boolean column %q", c.Key)
		}
		if c.Type == typing.TypeText {
			return textBetween(cond, c, vfield, list)
		}
		var err error
		cond.Values, err = condValues(vfield, c, list)
		return cond, err
	case "is_blank":
		b, ok := n.Value.(bool)
		if !ok {
			return cond, qerr(vfield, "is_blank takes true (empty or only spaces) or false")
		}
		cond.Null = b
		return cond, nil
	}
	return checkFilter(field, c, Filter{Column: n.Column, Op: n.Op, Value: n.Value})
}

// textBetween checks between on a text column: two numbers compare its
// values that are numbers, as numbers (Cond.AsNumber); two texts compare
// text.
func textBetween(cond Cond, c *Column, field string, list []any) (Cond, error) {
	lo, loNum := numberValue(list[0])
	hi, hiNum := numberValue(list[1])
	switch {
	case loNum && hiNum:
		cond.AsNumber, cond.Values = true, []any{lo, hi}
		return cond, nil
	case loNum != hiNum:
		return cond, qerr(field, "between takes two numbers (to compare the values that are numbers) or two texts, not one of each")
	}
	var err error
	cond.Values, err = condValues(field, c, list)
	return cond, err
}

var numberForm = regexp.MustCompile(`^` + NumberPattern + `$`)

// numberValue reads a filter value that is a number: a JSON number, or
// text in NumberPattern's form ("100000", as callers often quote them).
func numberValue(v any) (float64, bool) {
	s, ok := numberText(v)
	if _, quoted := v.(string); !ok || quoted && !numberForm.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// numberText is a filter value as the text of a number: a JSON number as
// written, text without the spaces around it; false for other values.
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), true
	case string:
		return strings.TrimSpace(x), true
	}
	return "", false
}
