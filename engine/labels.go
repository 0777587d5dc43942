package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"datadesk"
	"datadesk/engine/catalog"
)

// Label limits.
const (
	maxLabelText  = 2000
	maxLabelNotes = 50
)

// SetLabels stores a table's AI labels, replacing earlier ones. Errors:
// not_found, invalid (an unknown column, a text too long).
func (s *Store) SetLabels(ctx context.Context, tableID string, l catalog.Labels) (*catalog.Labels, error) {
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return nil, err
	}
	for k, v := range l.Columns {
		if _, ok := t.Lookup(k); !ok {
			return nil, datadesk.Errorf(datadesk.Invalid, "labels for unknown column %q", k).WithField("columns." + k).WithAllowed(t.Keys()...)
		}
		if len(v) > maxLabelText {
			return nil, datadesk.Errorf(datadesk.Invalid, "the description of %q is longer than %d bytes", k, maxLabelText).WithField("columns." + k)
		}
	}
	if len(l.Title) > 240 || len(l.Caption) > maxLabelText {
		return nil, datadesk.Errorf(datadesk.Invalid, "title may have 240 bytes and caption %d", maxLabelText).WithField("title")
	}
	if len(l.Notes) > maxLabelNotes {
		return nil, datadesk.Errorf(datadesk.Invalid, "at most %d notes", maxLabelNotes).WithField("notes")
	}
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, `DELETE FROM dd_labels WHERE table_id = ?`, t.ID); err != nil {
			return classify(ctx, err)
		}
		_, err := conn.ExecContext(ctx, `INSERT INTO dd_labels VALUES (?, ?, ?, ?)`, t.ID, string(b), l.Author, l.UpdatedAt)
		return classify(ctx, err)
	})
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// Labels returns a table's AI labels, or nil when it has none.
// Errors: not_found (table).
func (s *Store) Labels(ctx context.Context, tableID string) (*catalog.Labels, error) {
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return nil, err
	}
	var raw string
	err = s.db.QueryRowContext(ctx, `SELECT labels FROM dd_labels WHERE table_id = ?`, t.ID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(ctx, err)
	}
	var l catalog.Labels
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		return nil, fmt.Errorf("engine: labels of %s: %w", t.ID, err)
	}
	return &l, nil
}
