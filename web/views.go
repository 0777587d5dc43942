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
)

// viewQuery keeps of a table page's address what makes its view: the
// search, the sort and each column's conditions.
func viewQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, vals := range q {
		if k == "q" || k == "sort" || k == "dir" || strings.HasPrefix(k, "o.") || strings.HasPrefix(k, "f.") || strings.HasPrefix(k, "t.") {
			out[k] = vals
		}
	}
	return out
}

// SaveViewForm saves the table page's view (its filters, search and sort)
// under a name the form gives, for the files page to list.
func (h *Handler) SaveViewForm(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionRead, "table")
	if err != nil {
		return h.pageError(c, err)
	}
	defer release()
	form, err := url.ParseQuery(c.FormValue("view"))
	if err != nil {
		return h.pageError(c, datadesk.Errorf(datadesk.Invalid, "the view to save is not a page's address").WithField("view"))
	}
	query := viewQuery(form).Encode()
	v, err := store.SaveView(c.Request().Context(), id, c.FormValue("name"), query)
	if err != nil {
		if code := datadesk.ErrorCode(err); code == datadesk.Invalid || code == datadesk.TooLarge {
			return c.Redirect(http.StatusSeeOther, h.notes.withNote("/tables/"+id, viewQuery(form), "Not saved: "+datadesk.AsError(err).Message))
		}
		return h.pageError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, h.notes.withNote("/tables/"+id, viewQuery(form), "Saved as “"+v.Name+"”; the files page lists it."))
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
		_, rest := view.sentence(t, 2, q.Get("sort"), q.Get("dir"))
		shows := "Rows" + strings.TrimPrefix(rest, " rows")
		out = append(out, savedViewRow{Name: v.Name, URL: "/tables/" + t.ID + "?" + v.Query, Table: t.Name, Shows: shows,
			Created: v.CreatedAt.Format("2006-01-02 15:04")})
	}
	return out, nil
}
