package engine

import (
	"context"
	"database/sql"
	"strings"
	"time"
	"unicode/utf8"

	"datadesk"
)

// SavedView is a view of a table saved by name from its page: the page's
// query (filters, search, sort) as its address has it.
type SavedView struct {
	ID, TableID, Name, Query string
	CreatedAt                time.Time
}

// Bounds of a saved view.
const (
	MaxViewName  = 120
	MaxViewQuery = 8 << 10
)

// SaveView saves a view of table tableID under name. Errors: not_found
// (table), invalid (name empty or too long, query too long), too_large
// (MaxViews kept already).
func (s *Store) SaveView(ctx context.Context, tableID, name, query string) (*SavedView, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return nil, datadesk.Errorf(datadesk.Invalid, "a saved view needs a name").WithField("name")
	case utf8.RuneCountInString(name) > MaxViewName:
		return nil, datadesk.Errorf(datadesk.Invalid, "a view's name has at most %d characters", MaxViewName).WithField("name")
	case len(query) > MaxViewQuery:
		return nil, datadesk.Errorf(datadesk.Invalid, "a view's filters take at most %d bytes", MaxViewQuery).WithField("query")
	}
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return nil, err
	}
	v := &SavedView{ID: datadesk.NewID("v"), TableID: t.ID, Name: name, Query: query, CreatedAt: time.Now().UTC()}
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM dd_views`).Scan(&n); err != nil {
			return classify(ctx, err)
		}
		if n >= MaxViews {
			return datadesk.Errorf(datadesk.TooLarge, "you keep %d saved views, the most allowed; a file's views go when the file is deleted", n).WithField("name")
		}
		_, err := conn.ExecContext(ctx, `INSERT INTO dd_views VALUES (?, ?, ?, ?, ?)`, v.ID, v.TableID, v.Name, v.Query, v.CreatedAt)
		return classify(ctx, err)
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// SavedViews lists the owner's saved views, newest first.
func (s *Store) SavedViews(ctx context.Context) ([]SavedView, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, table_id, name, query, created_at FROM dd_views ORDER BY created_at DESC, id`)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	var out []SavedView
	for rows.Next() {
		var v SavedView
		if err := rows.Scan(&v.ID, &v.TableID, &v.Name, &v.Query, &v.CreatedAt); err != nil {
			return nil, classify(ctx, err)
		}
		out = append(out, v)
	}
	return out, classify(ctx, rows.Err())
}
