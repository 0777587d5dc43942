package api

import (
	"context"

	"github.com/labstack/echo/v5"

	"datadesk/engine"
	"datadesk/rbac"
)

// toolFilesQueryTable runs files.query_table: plan against the caller's
// catalog, one statement under the query timeout, and for show=true a view.
func (s *Server) toolFilesQueryTable(c *echo.Context, args map[string]any) (any, error) {
	var q engine.Query
	if err := bindArguments(args, &q); err != nil {
		return nil, err
	}
	store, release, err := s.store(c)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.QueryTimeout)
	defer cancel()
	plan, err := store.Plan(ctx, q)
	if err != nil {
		return nil, err
	}
	if q.Show {
		// A derived view is a new file of the caller's; showing the
		// original only reads.
		action := rbac.ActionRead
		if plan.Derived() {
			action = rbac.ActionCreate
		}
		if err := s.authorize(c, action); err != nil {
			return nil, err
		}
	}
	res, err := store.Run(ctx, plan)
	if err != nil {
		return nil, err
	}
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
