package web

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
)

// sentence says in words what a table page shows: how many rows, which
// conditions and search keep them, and their order ("237,952" and " rows
// where amount is between 100 and 200, sorted by day, newest first").
func (v *tableView) sentence(t *catalog.Table, total int64, sort, dir string) (count, rest string) {
	var b strings.Builder
	if total == 1 {
		b.WriteString(" row")
	} else {
		b.WriteString(" rows")
	}
	var conds []string
	for i := range v.Filters {
		conds = append(conds, v.condWords(i))
	}
	if v.Search != "" {
		conds = append(conds, fmt.Sprintf("a text column contains %q", v.Search))
	}
	if len(conds) > 0 {
		b.WriteString(" where " + strings.Join(conds, " and "))
	} else {
		b.WriteString(", all of the table")
	}
	if sort != "" {
		if c, ok := t.Lookup(sort); ok {
			b.WriteString(", sorted by " + labelOf(c) + ", " + orderWords(c.Type, dir == "desc"))
		}
	}
	return grouped(total), b.String()
}

// condWords says filter i in words: "amount is between 100 and 200".
func (v *tableView) condWords(i int) string {
	f := v.Filters[i]
	col := columnOf(v.Table.Columns[v.filterAt[i][0]])
	date := col.Type == "date" || col.Type == "timestamp"
	value := func(x any) string {
		s := fmt.Sprint(x)
		if col.Class == "text" && !date {
			return strconv.Quote(s)
		}
		return s
	}
	name := col.Label
	switch f.Op {
	case "is_blank":
		if f.Value == true {
			return name + " is blank"
		}
		return name + " is not blank"
	case "is_null":
		if f.Value == true {
			return name + " is empty"
		}
		return name + " is not empty"
	case "between":
		list := f.Value.([]any)
		return fmt.Sprintf("%s is between %s and %s", name, value(list[0]), value(list[1]))
	case "in":
		var vals []string
		for _, x := range f.Value.([]any) {
			vals = append(vals, value(x))
		}
		return name + " is one of " + strings.Join(vals, ", ")
	case "contains":
		return name + " contains " + value(f.Value)
	case "starts_with":
		return name + " starts with " + value(f.Value)
	case "ends_with":
		return name + " ends with " + value(f.Value)
	}
	words := map[string]string{"eq": "is", "ne": "is not", "gt": "is more than", "gte": "is at least", "lt": "is less than", "lte": "is at most"}
	if date {
		words = map[string]string{"eq": "is on", "ne": "is not on", "gt": "is after", "gte": "is on or after", "lt": "is before", "lte": "is on or before"}
	} else if col.Class == "text" {
		words = map[string]string{"eq": "equals", "ne": "is not", "gt": "comes after", "gte": "is or comes after", "lt": "comes before", "lte": "is or comes before"}
	}
	if w, ok := words[f.Op]; ok {
		return name + " " + w + " " + value(f.Value)
	}
	return name + " " + f.Op + " " + value(f.Value)
}

func labelOf(c catalog.Column) string {
	if c.Label != "" {
		return c.Label
	}
	return c.Key
}

// orderWords says an order in words fitted to the type.
func orderWords(typ string, desc bool) string {
	switch {
	case catalog.Numeric(typ):
		return map[bool]string{false: "smallest first", true: "largest first"}[desc]
	case typ == "date" || typ == "timestamp":
		return map[bool]string{false: "oldest first", true: "newest first"}[desc]
	case typ == "boolean":
		return map[bool]string{false: "false first", true: "true first"}[desc]
	}
	return map[bool]string{false: "A to Z", true: "Z to A"}[desc]
}

// grouped writes a count with thousands separators: 237,952.
func grouped(n int64) string {
	if n < 0 {
		return "-" + groupDigits(strconv.FormatInt(-n, 10))
	}
	return groupDigits(strconv.FormatInt(n, 10))
}

// groupDigits puts a comma between each three digits from the right.
func groupDigits(digits string) string {
	var b strings.Builder
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// whyNone says, for a page whose conditions matched nothing, which one
// alone matches nothing (the tools' rule for blaming a filter), or that
// each matches rows and not together, with the tools' hint of a value in
// another form where there is one.
func whyNone(ctx context.Context, store *engine.Store, t *catalog.Table, v *tableView) (string, error) {
	if len(v.Filters) == 0 && v.Search == "" {
		return "", nil
	}
	var alone []string
	if len(v.Filters)+btoi(v.Search != "") > 1 {
		for i, f := range v.Filters {
			p, err := store.Rows(ctx, t.ID, catalog.PageRequest{Limit: 1, Filters: []catalog.Filter{f}})
			if err != nil {
				return "", err
			}
			if p.Total == 0 {
				alone = append(alone, v.condWords(i))
			}
		}
	}
	quoted := func(cs []string) string {
		for i, c := range cs {
			cs[i] = "“" + c + "”"
		}
		return strings.Join(cs, " nor ")
	}
	var why string
	switch {
	case len(v.Filters)+btoi(v.Search != "") == 1:
		why = "No row meets " + quoted([]string{firstCond(v)}) + "."
	case len(alone) == 1:
		why = "No row meets " + quoted(alone) + ": that condition alone matches nothing."
	case len(alone) > 1:
		why = "No row meets " + quoted(alone) + ": each of these conditions alone matches nothing."
	default:
		why = "Each condition matches some rows, but no row meets all of them."
	}
	plan, err := store.Plan(ctx, v.Query())
	if err != nil {
		return why, nil
	}
	res, err := store.Run(ctx, plan)
	if err != nil {
		return "", err
	}
	if res.Hint != "" {
		why += " " + strings.ToUpper(res.Hint[:1]) + res.Hint[1:]
	}
	return why, nil
}

func firstCond(v *tableView) string {
	if len(v.Filters) > 0 {
		return v.condWords(0)
	}
	return fmt.Sprintf("a text column contains %q", v.Search)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// exportName names an export of a view by what it holds: the table's
// name and, when filtered, its conditions in words, whole ("orders,
// amount is between 100 and 200"). A name past what a file's name may
// hold counts the conditions instead ("orders, 14 conditions").
func (v *tableView) exportName(t *catalog.Table) string {
	var conds []string
	for i := range v.Filters {
		conds = append(conds, v.condWords(i))
	}
	if v.Search != "" {
		conds = append(conds, fmt.Sprintf("a text column contains %q", v.Search))
	}
	if len(conds) == 0 {
		return t.Name
	}
	name := t.Name + ", " + strings.Join(conds, " and ")
	if len(name)+len(".xlsx") > datadesk.MaxFilenameLen {
		name = fmt.Sprintf("%s, %d conditions", t.Name, len(conds))
	}
	return name
}
