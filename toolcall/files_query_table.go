package toolcall

import (
	"context"

	"datadesk/engine/catalog"
	"datadesk/rbac"
)

// toolFilesQueryTable runs files.query_table: plan against the caller's
// catalog, one statement under the query timeout, and for show=true a view.
func (p *Pipeline) toolFilesQueryTable(call *toolCall, args *Arguments) (any, error) {
	var q catalog.Query
	if err := args.bind(&q); err != nil {
		return nil, err
	}
	store := call.store
	ctx, cancel := context.WithTimeout(call.ctx, p.cfg.QueryTimeout)
	defer cancel()
	plan, err := store.Plan(ctx, q)
	if err != nil {
		return nil, fileIDError(ctx, store, "file_id", q.FileID, err)
	}
	notes, err := store.CheckTextUses(ctx, plan.TextUses())
	if err != nil {
		return nil, err
	}
	res, err := store.Run(ctx, plan)
	if err != nil {
		return nil, err
	}
	res.Notes = append(notes, res.Notes...)
	res.Notes = append(res.Notes, tableNotes(ctx, store, q.FileID, plan.Table)...)
	// The plan stays inspectable in the log; the model does not need it.
	p.cfg.Logger.Debug("files.query_table", "user", call.caller.UserID, "table", res.TableID, "sql", res.SQL)
	if q.Show {
		// A derived view is a new file of the caller's, as big as the rows
		// it matched (or its groups); showing the original only reads.
		action, rows := rbac.ActionRead, res.SourceRowCount
		if plan.Derived() {
			action, rows = rbac.ActionCreate, res.MatchedRowCount
			if res.GroupCount != nil {
				rows = *res.GroupCount
			}
		}
		attrs := rbac.Attrs{Tool: "files.query_table", Show: true, Derived: plan.Derived(), Rows: int(rows), Columns: len(res.Columns)}
		if err := call.authorize(p, action, attrs); err != nil {
			return nil, err
		}
		view, err := store.Show(ctx, plan, res)
		if err != nil {
			return nil, err
		}
		if view != nil {
			view.PreviewURL = PreviewURL(view.TableID)
		}
		res.View = view
	}
	return res, nil
}
