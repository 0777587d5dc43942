package api

import (
	"context"

	"datadesk/engine"
	"datadesk/rbac"
)

// toolFilesQueryTable runs files.query_table: plan against the caller's
// catalog, one statement under the query timeout, and for show=true a view.
func (s *Server) toolFilesQueryTable(call *toolCall, args map[string]any) (any, error) {
	var q engine.Query
	if err := bindArguments(args, &q); err != nil {
		return nil, err
	}
	store, release, err := s.storeOf(call.ctx, call.caller.UserID)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(call.ctx, s.cfg.QueryTimeout)
	defer cancel()
	plan, err := store.Plan(ctx, q)
	if err != nil {
		return nil, fileIDError(ctx, store, "file_id", q.FileID, err)
	}
	if q.Show {
		// A derived view is a new file of the caller's; showing the
		// original only reads.
		action := rbac.ActionRead
		if plan.Derived() {
			action = rbac.ActionCreate
		}
		if err := call.authorize(s, action, rbac.Attrs{Tool: "files.query_table", Show: true, Derived: plan.Derived()}); err != nil {
			return nil, err
		}
	}
	res, err := store.Run(ctx, plan)
	if err != nil {
		return nil, err
	}
	// The plan stays inspectable in the log; the model does not need it.
	s.cfg.Logger.Debug("files.query_table", "user", call.caller.UserID, "table", res.TableID, "sql", res.SQL)
	if q.Show {
		view, err := store.Show(ctx, plan, res)
		if err != nil {
			return nil, err
		}
		if view != nil {
			view.PreviewURL = previewURL(view.TableID)
		}
		res.View = view
	}
	return res, nil
}
