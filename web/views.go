package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/rbac"
	"datadesk/tableview"
)

// SaveViewForm saves the table page's view (its conditions, search,
// sort, columns, summaries and grouping) under a name the form gives,
// for the files page to list, and goes back to the view, its address
// holding only the view: what happened is said once, apart from it.
func (h *Handler) SaveViewForm(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionRead, "table")
	if err != nil {
		return h.pageError(c, err)
	}
	defer release()
	ctx := c.Request().Context()
	t, err := store.Table(ctx, id)
	if err != nil {
		return h.pageError(c, err)
	}
	form, err := url.ParseQuery(c.FormValue("view"))
	if err != nil {
		return h.pageError(c, datadesk.Errorf(datadesk.Invalid, "the view to save is not a page's address").WithField("view"))
	}
	view, err := tableview.Parse(t, form, tableview.ForPage)
	if err != nil {
		return h.pageError(c, err)
	}
	view.Offset, view.Message = 0, ""
	v, err := store.SaveView(ctx, id, c.FormValue("name"), view.Encode())
	switch code := datadesk.ErrorCode(err); {
	case code == datadesk.Invalid, code == datadesk.TooLarge:
		setFlash(c, "Not saved: "+datadesk.AsError(err).Message)
	case err != nil:
		return h.pageError(c, err)
	default:
		setFlash(c, "Saved as “"+v.Name+"”; the files page lists it.")
	}
	return c.Redirect(http.StatusSeeOther, view.Href("/tables/"+id))
}

// savedViewRow is a saved view as the files page lists it: its name, its
// table and, in words, what it shows.
type savedViewRow struct {
	Name, URL, Table, Shows, Created string
}

// savedViewRows lists the owner's saved views with their sentences; a
// view of a table since deleted is left out.
func savedViewRows(ctx context.Context, store *engine.Store) ([]savedViewRow, error) {
	views, err := store.SavedViews(ctx)
	if err != nil {
		return nil, err
	}
	var out []savedViewRow
	for _, v := range views {
		t, err := store.Table(ctx, v.TableID)
		if err != nil {
			continue
		}
		q, _ := url.ParseQuery(v.Query)
		view := viewOf(t, q)
		_, rest := view.sentence(t, 2, view.Sort, view.Dir)
		shows := "Rows" + strings.TrimPrefix(rest, " rows")
		out = append(out, savedViewRow{Name: v.Name, URL: view.Href("/tables/" + t.ID), Table: t.Name, Shows: shows,
			Created: v.CreatedAt.Format("2006-01-02 15:04")})
	}
	return out, nil
}
