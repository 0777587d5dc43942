package toolcall

import (
	"context"
	"fmt"
	"strings"

	"datadesk"
	"datadesk/engine"
)

// callTarget says which files a call will make or read, for the queue of
// calls waiting for a person: "makes targets.xlsx", "reads orders.csv
// (table orders); stores its answer as a new table". Ids the caller has
// not are said as ids.
func callTarget(ctx context.Context, open func() (*engine.Store, error), call *Arguments) string {
	args := call.values
	var ids []string
	if id, ok := args["file_id"].(string); ok {
		ids = append(ids, id)
	}
	if id, ok := args["source_file_id"].(string); ok {
		ids = append(ids, id)
	}
	if lookup, ok := args["lookup"].(map[string]any); ok {
		if id, ok := lookup["file_id"].(string); ok {
			ids = append(ids, id)
		}
	}
	if list, ok := args["file_ids"].([]any); ok {
		for _, x := range list {
			if id, ok := x.(string); ok {
				ids = append(ids, id)
			}
		}
	}
	var parts []string
	if name, ok := args["filename"].(string); ok && name != "" {
		parts = append(parts, "makes "+name)
	}
	if len(ids) > 0 {
		names := make([]string, len(ids))
		for i, id := range ids {
			names[i] = fileName(ctx, open, id)
		}
		parts = append(parts, "reads "+strings.Join(names, ", "))
	}
	if show, _ := args["show"].(bool); show {
		parts = append(parts, "stores its answer as a new table")
	}
	return strings.Join(parts, "; ")
}

// fileName names a file or table id of the caller's: "orders.csv", a
// table "orders (a table of orders.csv)".
func fileName(ctx context.Context, open func() (*engine.Store, error), id string) string {
	if !datadesk.ValidID(id) {
		return id
	}
	store, err := open()
	if err != nil {
		return id
	}
	if strings.HasPrefix(id, "t_") {
		if t, err := store.Table(ctx, id); err == nil {
			if f, err := store.File(ctx, t.FileID); err == nil && f.Filename != t.Name {
				return fmt.Sprintf("%s (a table of %s)", t.Name, f.Filename)
			}
			return t.Name
		}
	} else if f, err := store.File(ctx, id); err == nil {
		return f.Filename
	}
	return id
}
