package toolcall

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxCell bounds each cell of the rows an answer's text shows.
const maxCell = 60

// clip cuts s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// answerText is a query's or an analysis's answer as text: the counts,
// its aggregates, its rows as a table of columns split by " | " (each cell
// cut to maxCell bytes) as far as budget allows, then a sentence with
// the rows left out and where the next page starts, its hint, its notes
// and the table it was stored as.
func answerText(r map[string]any, budget int) string {
	var head, tail strings.Builder
	fmt.Fprintf(&head, "%s of %s match", fmt.Sprint(r["matched_row_count"]), rowsWord(r["source_row_count"]))
	if f, ok := r["file_id"].(string); ok && f != "" {
		head.WriteString(" in " + f)
	}
	head.WriteString(".")
	if g, ok := r["group_count"]; ok {
		fmt.Fprintf(&head, " %s.", countWord(g, "group", "groups"))
	}
	if a, ok := r["aggregates"].(map[string]any); ok && len(a) > 0 {
		names := make([]string, 0, len(a))
		for k := range a {
			names = append(names, k)
		}
		sort.Strings(names)
		for i, k := range names {
			names[i] = k + " = " + cellText(a[k])
		}
		fmt.Fprintf(&head, " %s.", strings.Join(names, ", "))
	}
	if h, ok := r["hint"].(string); ok && h != "" {
		tail.WriteString("\nHint: " + h)
	}
	if notes, ok := r["notes"].([]any); ok {
		for _, n := range notes {
			tail.WriteString("\nNote: " + fmt.Sprint(n))
		}
	}
	if v, ok := r["view"].(map[string]any); ok {
		fmt.Fprintf(&tail, "\nStored as table %v (%v rows).", v["table_id"], v["row_count"])
	}
	rows, _ := r["rows"].([]any)
	cols, _ := r["columns"].([]any)
	if len(rows) == 0 || len(cols) == 0 {
		return head.String() + tail.String()
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = fmt.Sprint(c)
	}
	offset, _ := toInt(r["offset"])
	var table strings.Builder
	table.WriteString("\n" + strings.Join(names, " | "))
	// Room kept for the sentence on what did not fit.
	room := budget - head.Len() - tail.Len() - 160
	shown := 0
	for _, row := range rows {
		cells, _ := row.([]any)
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = clip(cellText(c), maxCell)
		}
		line := "\n" + strings.Join(parts, " | ")
		if table.Len()+len(line) > room {
			break
		}
		table.WriteString(line)
		shown++
	}
	switch {
	case shown < len(rows):
		fmt.Fprintf(&table, "\n%s of this page not shown here: they are in the structured content, or ask again with offset %d.",
			countWord(len(rows)-shown, "more row", "more rows"), offset+shown)
	case r["has_more"] == true:
		fmt.Fprintf(&table, "\nMore follow: ask again with offset %d.", offset+len(rows))
	}
	return head.String() + table.String() + tail.String()
}

// cellText is a value as the text of an answer writes it: null for an
// empty cell, numbers as JSON has them, text as it is.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strings.ReplaceAll(strings.ReplaceAll(x, "\n", " "), "|", "/")
	}
	return fmt.Sprint(v)
}

// rowsWord is a count of rows in words: 1 row, 12 rows.
func rowsWord(n any) string { return countWord(n, "row", "rows") }

func countWord(n any, one, many string) string {
	if k, ok := toInt(n); ok && k == 1 {
		return "1 " + one
	}
	return fmt.Sprint(n) + " " + many
}

// toInt reads a JSON number as an int.
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	case float64:
		return int(x), true
	case int:
		return x, true
	case int64:
		return int(x), true
	}
	return 0, false
}

// fileText is one file as files.read answers it: its name, id and link,
// and each of its tables as it was read (sheet, rows, header rows, rows
// kept out with the first of them, cells stored empty, the import's
// notes), so that a model can tell a reading to correct.
func fileText(f map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v (%v, %v bytes): download %v", f["filename"], f["id"], f["size"], f["download_url"])
	tables, _ := f["tables"].([]any)
	if len(tables) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\n%s:", countWord(len(tables), "table", "tables"))
	for _, x := range tables {
		t, _ := x.(map[string]any)
		b.WriteString("\n- " + tableLine(t))
		kept, _ := t["kept_out"].([]any)
		for _, k := range kept {
			row, _ := k.(map[string]any)
			fmt.Fprintf(&b, "\n  kept out, %v: row %v %q", row["where"], row["row"], fmt.Sprint(row["text"]))
		}
		if n, ok := toInt(t["rows_kept_out"]); ok && n > len(kept) {
			fmt.Fprintf(&b, "\n  and %d more rows kept out (the table's import report lists each)", n-len(kept))
		}
		notes, _ := t["notes"].([]any)
		for _, n := range notes {
			b.WriteString("\n  note: " + fmt.Sprint(n))
		}
	}
	if len(tables) > 1 {
		first, _ := tables[0].(map[string]any)
		fmt.Fprintf(&b, "\nThe file's id answers from its first table, %q; give another table's id as file_id to ask it.", fmt.Sprint(first["name"]))
	}
	b.WriteString("\nTo read a table again with its header rows or rows to keep out named, call files.analyze_table with reading.")
	return b.String()
}

// tableLine is a table in a line: its name and id, sheet, size and
// header rows.
func tableLine(t map[string]any) string {
	s := fmt.Sprintf("%v (%v)", t["name"], t["id"])
	if sheet, ok := t["sheet"].(string); ok && sheet != "" && sheet != t["name"] {
		s += ", sheet " + sheet
	}
	s += fmt.Sprintf(": %s, %s", rowsWord(t["row_count"]), countWord(t["column_count"], "column", "columns"))
	switch rows, _ := t["header_rows"].([]any); {
	case len(rows) > 1:
		s += fmt.Sprintf(", header rows %v to %v", rows[0], rows[len(rows)-1])
	case t["header_row"] != nil:
		s += fmt.Sprintf(", header row %v", t["header_row"])
	}
	if t["header_asked"] == true {
		s += " (as asked)"
	}
	if n, ok := toInt(t["cells_stored_empty"]); ok && n > 0 {
		s += fmt.Sprintf(", %s of other text in numeric columns stored empty", countWord(n, "cell", "cells"))
	}
	return s
}

// listText is files.read's list: each file with its id, and the tables
// of those with several or read otherwise than plainly.
func listText(r map[string]any) string {
	files, _ := r["files"].([]any)
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", countWord(len(files), "file", "files"))
	for _, x := range files {
		f, _ := x.(map[string]any)
		fmt.Fprintf(&b, "\n%v (%v)", f["filename"], f["id"])
		if n, ok := toInt(f["row_count"]); ok {
			fmt.Fprintf(&b, ": %s", rowsWord(n))
		}
		tables, _ := f["tables"].([]any)
		for _, y := range tables {
			t, _ := y.(map[string]any)
			line := fmt.Sprintf("%v (%v)", t["name"], t["id"])
			if sheet, ok := t["sheet"].(string); ok && sheet != "" && sheet != t["name"] {
				line += ", sheet " + sheet
			}
			line += ": " + rowsWord(t["row_count"])
			if rows, _ := t["header_rows"].([]any); len(rows) > 1 {
				line += fmt.Sprintf(", header rows %v to %v", rows[0], rows[len(rows)-1])
			}
			if n, ok := toInt(t["rows_kept_out"]); ok && n > 0 {
				line += fmt.Sprintf(", %s kept out", countWord(n, "row", "rows"))
			}
			if u, ok := t["uncertain"].(string); ok && u != "" {
				line += "; " + u
			}
			b.WriteString("\n  - " + line)
		}
	}
	if results, ok := r["stored_results"].([]any); ok {
		fmt.Fprintf(&b, "\nStored results, newest first (%d):", len(results))
		for _, x := range results {
			v, _ := x.(map[string]any)
			fmt.Fprintf(&b, "\n%v (%v, %v rows) from %v: %v", v["name"], v["table_id"], v["row_count"], v["source"], v["made_by"])
		}
	}
	b.WriteString("\nRead one file by file_id for how its tables were read.")
	return b.String()
}
