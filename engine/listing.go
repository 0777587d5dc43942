package engine

import (
	"context"
	"fmt"

	"datadesk"
	"datadesk/engine/catalog"
)

// FileQuery asks for a page of the owner's files.
type FileQuery struct {
	// Session, if set, keeps that chat session's files; Search, if set,
	// those whose name contains it, ignoring case.
	Session, Search string
	// Sort is "date" (newest first), "name", "size" (largest first) or
	// "rows" (most first); ties go by name.
	Sort string
	// Offset and Limit say which page; an offset past the end gives the
	// last page.
	Offset, Limit int
}

// FilePage is a page of files, with how many match the query and the
// offset the page starts at.
type FilePage struct {
	Files  []catalog.File
	Total  int
	Offset int
}

// fileOrders are FileQuery.Sort's orders, each the SQL of its order.
var fileOrders = map[string]string{
	"date": "f.created_at DESC",
	"name": "lower(f.filename)",
	"size": "f.size DESC",
	"rows": "coalesce(r.rows, 0) DESC",
}

// FilesPage returns one page of the owner's files: the catalog picks,
// sorts and counts them, and only the page's files and tables are read,
// so a page costs the same however many files the owner keeps. Errors:
// invalid (sort).
func (s *Store) FilesPage(ctx context.Context, q FileQuery) (*FilePage, error) {
	order, ok := fileOrders[q.Sort]
	if !ok {
		return nil, datadesk.Errorf(datadesk.Invalid, "sort must be one of date, name, size, rows").WithField("sort")
	}
	limit, offset := max(q.Limit, 1), max(q.Offset, 0)
	sql := fmt.Sprintf(`SELECT f.id, f.filename, f.content_type, f.size, f.sha256, f.chat_session_id, f.created_at, count(*) OVER ()
		FROM dd_files f LEFT JOIN (SELECT file_id, sum(row_count) AS rows FROM dd_tables WHERE kind = 'sheet' GROUP BY file_id) r ON r.file_id = f.id
		WHERE (? = '' OR f.chat_session_id = ?) AND (? = '' OR contains(lower(f.filename), lower(?)))
		ORDER BY %s, lower(f.filename), f.id LIMIT ? OFFSET ?`, order)
	page := func(offset int) ([]catalog.File, int, error) {
		return s.filesWhere(ctx, sql, q.Session, q.Session, q.Search, q.Search, limit, offset)
	}
	files, total, err := page(offset)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 && offset > 0 {
		// Past the end: the count of all that match, then the last page.
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM dd_files WHERE (? = '' OR chat_session_id = ?) AND (? = '' OR contains(lower(filename), lower(?)))`,
			q.Session, q.Session, q.Search, q.Search).Scan(&total); err != nil {
			return nil, classify(ctx, err)
		}
		offset = max(total-1, 0) / limit * limit
		if files, _, err = page(offset); err != nil {
			return nil, err
		}
	}
	return &FilePage{Files: files, Total: total, Offset: offset}, nil
}

// maxSessionsListed bounds the chat sessions ChatSessions lists.
const maxSessionsListed = 200

// ChatSessions returns the chat sessions the owner's files came from, in
// order, at most maxSessionsListed.
func (s *Store) ChatSessions(ctx context.Context) ([]string, error) {
	return s.queryStrings(ctx, `SELECT DISTINCT chat_session_id FROM dd_files WHERE chat_session_id <> '' ORDER BY 1 LIMIT ?`, maxSessionsListed)
}

// queryStrings runs q, whose rows are one text each, and returns them.
func (s *Store) queryStrings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, classify(ctx, err)
		}
		out = append(out, v)
	}
	return out, classify(ctx, rows.Err())
}
