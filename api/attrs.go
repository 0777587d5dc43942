package api

import (
	"context"

	"datadesk"
	"datadesk/engine"
	"datadesk/rbac"
)

// workAttrs are a call's attributes as the work sees them, so a policy
// condition cannot be passed by pointing at data instead of sending it:
// a copy by source_file_id has the source table's rows and columns, a ZIP
// the sum of its members' sizes. Ids that are not the owner's add nothing;
// the call itself then answers not found.
func workAttrs(ctx context.Context, eng *engine.Engine, owner string, t *tool, args map[string]any) (rbac.Attrs, error) {
	a := callAttrs(t, args)
	if t.Name != rbac.ActionCreate {
		return a, nil
	}
	src, _ := args["source_file_id"].(string)
	ids, _ := args["file_ids"].([]any)
	if src == "" && len(ids) == 0 {
		return a, nil
	}
	store, release, err := eng.Acquire(ctx, owner)
	if err != nil {
		return a, err
	}
	defer release()
	if src != "" {
		tbl, err := store.Table(ctx, src)
		switch {
		case err == nil:
			a.Rows, a.Columns = int(tbl.RowCount), len(tbl.Columns)
		case !datadesk.IsNotFound(err):
			return a, err
		}
	}
	for _, v := range ids {
		id, _ := v.(string)
		f, err := store.File(ctx, id)
		switch {
		case err == nil:
			a.Bytes += f.Size
		case !datadesk.IsNotFound(err):
			return a, err
		}
	}
	return a, nil
}
