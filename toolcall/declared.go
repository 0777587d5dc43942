package toolcall

import (
	"context"
	"io"

	"datadesk/engine"
	"datadesk/engine/catalog"
)

// Declared is a table result a tool provider hands over, its columns and
// rows read as files.create reads them.
type Declared struct {
	t    *newTable
	rows RowList
}

// ReadDeclared reads a declared table's columns and rows. Errors:
// invalid, naming the column or row.
func ReadDeclared(columns []any, rows RowList) (*Declared, error) {
	t, err := buildTable(columns, rows, false)
	if err != nil {
		return nil, err
	}
	return &Declared{t: t, rows: rows}, nil
}

// Keys are the table's column keys.
func (d *Declared) Keys() []string { return d.t.keys }

// Chars is how many characters the rows take as compact JSON.
func (d *Declared) Chars() (int, error) {
	if r, ok := d.rows.(*Rows); ok {
		return r.chars()
	}
	return 0, nil
}

// Store keeps the table as a JSON file of the store's owner, named
// filename, its one table named name.
func (d *Declared) Store(ctx context.Context, store *engine.Store, filename, name, session string) (*catalog.File, error) {
	tmp, err := WriteTemp(store.IncomingDir(), func(w io.Writer) error { return writeTable(w, ".json", d.t.exportSource(), "") })
	if err != nil {
		return nil, err
	}
	return store.AddFile(ctx, engine.NewFile{Filename: filename, ContentType: "application/json",
		ChatSession: session, TempPath: tmp, Tables: []engine.TableSource{d.t.source(name)}})
}
