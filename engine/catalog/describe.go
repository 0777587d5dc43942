package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DescribeQuery says in words what made a stored result, from the
// arguments of the files.query_table or files.analyze_table call kept
// with it: its filters, groups, measures, top, having and order, as a
// person would read them ("filters: region eq North; groups: region,
// month of day; measures: sum of amount, count; sorted by total,
// descending"). It returns "" for arguments it cannot read.
func DescribeQuery(raw string) string {
	var a map[string]any
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return ""
	}
	var parts []string
	if fs, ok := a["filters"].([]any); ok && len(fs) > 0 {
		var conds []string
		for _, f := range fs {
			conds = append(conds, describeFilter(f))
		}
		parts = append(parts, "filters: "+strings.Join(conds, " and "))
	}
	if gs, ok := a["group_by"].([]any); ok && len(gs) > 0 {
		var groups []string
		for _, g := range gs {
			switch x := g.(type) {
			case string:
				groups = append(groups, x)
			case map[string]any:
				if b, ok := x["bucket"].(string); ok && b != "" {
					groups = append(groups, fmt.Sprintf("%s of %v", b, x["column"]))
				} else {
					groups = append(groups, fmt.Sprint(x["column"]))
				}
			}
		}
		parts = append(parts, "groups: "+strings.Join(groups, ", "))
	}
	for _, key := range []string{"measures", "aggregates"} {
		ms, ok := a[key].([]any)
		if !ok || len(ms) == 0 {
			continue
		}
		var names []string
		for _, m := range ms {
			names = append(names, describeMeasure(m))
		}
		parts = append(parts, "measures: "+strings.Join(names, ", "))
	}
	if cs, ok := a["columns"].([]any); ok && len(cs) > 0 {
		var cols []string
		for _, c := range cs {
			cols = append(cols, fmt.Sprint(c))
		}
		parts = append(parts, "columns: "+strings.Join(cols, ", "))
	}
	if hs, ok := a["having"].([]any); ok && len(hs) > 0 {
		var conds []string
		for _, h := range hs {
			if m, ok := h.(map[string]any); ok {
				conds = append(conds, fmt.Sprintf("%v %v %v", m["measure"], m["op"], valueWords(m["value"])))
			}
		}
		parts = append(parts, "groups kept where "+strings.Join(conds, " and "))
	}
	if t, ok := a["top"].(map[string]any); ok {
		s := fmt.Sprintf("top %v", t["n"])
		if per, ok := t["per"].([]any); ok && len(per) > 0 {
			var ps []string
			for _, p := range per {
				ps = append(ps, fmt.Sprint(p))
			}
			s += " per " + strings.Join(ps, ", ")
		}
		if by, ok := t["by"].(string); ok && by != "" {
			s += " by " + by
		}
		parts = append(parts, s)
	}
	if s, ok := a["sort_by"].(string); ok && s != "" {
		dir := "ascending"
		if a["direction"] == "desc" {
			dir = "descending"
		}
		parts = append(parts, "sorted by "+s+", "+dir)
	}
	return strings.Join(parts, "; ")
}

func describeFilter(f any) string {
	m, ok := f.(map[string]any)
	if !ok {
		return fmt.Sprint(f)
	}
	for _, join := range []string{"any", "all"} {
		if xs, ok := m[join].([]any); ok {
			var conds []string
			for _, x := range xs {
				conds = append(conds, describeFilter(x))
			}
			word := " or "
			if join == "all" {
				word = " and "
			}
			return "(" + strings.Join(conds, word) + ")"
		}
	}
	if n, ok := m["not"]; ok {
		return "not " + describeFilter(n)
	}
	s := fmt.Sprintf("%v %v", m["column"], m["op"])
	if v, ok := m["value"]; ok {
		s += " " + valueWords(v)
	}
	return s
}

func describeMeasure(m any) string {
	x, ok := m.(map[string]any)
	if !ok {
		return fmt.Sprint(m)
	}
	var s string
	switch {
	case x["expr"] != nil:
		s = fmt.Sprint(x["expr"])
	case x["column"] != nil:
		s = fmt.Sprintf("%v of %v", x["op"], x["column"])
	default:
		s = fmt.Sprint(x["op"])
	}
	if name, ok := x["name"].(string); ok && name != "" {
		s = name + " = " + s
	}
	return s
}

func valueWords(v any) string {
	switch x := v.(type) {
	case []any:
		var vs []string
		for _, e := range x {
			vs = append(vs, fmt.Sprint(e))
		}
		return strings.Join(vs, ", ")
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}
