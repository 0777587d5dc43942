package toolcall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/ingest"
	"datadesk/rbac"
)

// readingArgs are files.analyze_table's reading: how to read the file
// behind file_id again before the analysis, as a person can over HTTP,
// the command line and the page.
type readingArgs struct {
	HeaderRows []int  `json:"header_rows"`
	Sheet      string `json:"sheet"`
	SkipRows   []int  `json:"skip_rows"`
}

// readingOf binds the reading argument, when given. Errors: invalid.
func readingOf(args *Arguments) (*ingest.Options, error) {
	if _, ok := args.values["reading"]; !ok {
		return nil, nil
	}
	var r readingArgs
	if err := args.bindArgument("reading", &r); err != nil {
		return nil, err
	}
	o := ingest.Options{HeaderRows: r.HeaderRows, Sheet: r.Sheet, SkipRows: r.SkipRows}
	if len(o.HeaderRows) == 0 && len(o.SkipRows) == 0 {
		return nil, datadesk.Errorf(datadesk.Invalid, "reading names header_rows, skip_rows or both (and the sheet they apply to)").WithField("reading")
	}
	if err := o.Check(); err != nil {
		return nil, underField("reading", err)
	}
	return &o, nil
}

// underField puts a refusal of a reading's option under parent:
// "reading.header_rows".
func underField(parent string, err error) error {
	var de *datadesk.Error
	if errors.As(err, &de) && (de.Field == "header_row" || de.Field == "header_rows" || de.Field == "sheet" || de.Field == "skip_rows") {
		e := *de
		e.Field = parent + "." + de.Field
		return &e
	}
	return err
}

// readAgain reads the file behind id (a file's id or one of its tables')
// again as opts says, into a new file of the caller's, as files.create
// makes one: the policy decides on files.create with the file's bytes and
// format before, and with its tables' rows and columns once read. The
// stored bytes are shared, not copied, and count against the owner's
// storage limit as a new file. It returns the new file and its
// table to answer from: the one of the sheet asked, else the one in the
// place of id's. Errors: not_found, invalid (options that name no row or
// sheet of the file), forbidden, and a needed approval.
func (p *Pipeline) readAgain(ctx context.Context, call *toolCall, id string, opts ingest.Options) (*catalog.File, *catalog.Table, error) {
	store := call.store
	t, err := store.Table(ctx, id)
	if err != nil {
		return nil, nil, fileIDError(ctx, store, "file_id", id, err)
	}
	f, err := store.File(ctx, t.FileID)
	if err != nil {
		return nil, nil, err
	}
	if opts.Sheet == "" && len(f.Tables) > 1 && t.Report.Sheet != "" {
		// The rows named are the sheet's of the table asked about.
		opts.Sheet = t.Report.Sheet
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(f.Filename)), ".")
	if err := call.authorize(p, rbac.ActionCreate, rbac.Attrs{Tool: rbac.ActionCreate, Bytes: f.Size, Format: format}); err != nil {
		return nil, nil, err
	}
	_, tmp, err := store.ShareBytes(ctx, f.ID)
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(tmp) // gone already once stored
	res, err := p.ingest.ReadWith(ctx, tmp, f.Filename, store.IncomingDir(), opts)
	if err != nil {
		return nil, nil, underField("reading", err)
	}
	defer res.Close()
	nf, err := store.AddFile(ctx, engine.NewFile{
		Filename: f.Filename, ContentType: res.ContentType, ChatSession: call.caller.ChatSession,
		TempPath: tmp, SHA256: f.SHA256, Size: f.Size, Tables: res.Tables,
		Admit: func(tables []catalog.Table) error {
			a := rbac.Attrs{Tool: rbac.ActionCreate, Bytes: f.Size, Format: format}
			for _, t := range tables {
				a.Rows += int(t.RowCount)
				a.Columns = max(a.Columns, len(t.Columns))
			}
			return call.authorize(p, rbac.ActionCreate, a)
		},
	})
	if err != nil {
		return nil, nil, err
	}
	return nf, pickTable(nf, opts.Sheet, t.Ordinal), nil
}

// pickTable is the table of a file read again to answer from: the first
// of sheet, else the one at ordinal, else the first.
func pickTable(f *catalog.File, sheet string, ordinal int) *catalog.Table {
	if sheet != "" {
		for i := range f.Tables {
			if strings.EqualFold(f.Tables[i].Report.Sheet, datadesk.CleanName(sheet)) {
				return &f.Tables[i]
			}
		}
	}
	if ordinal < len(f.Tables) {
		return &f.Tables[ordinal]
	}
	return &f.Tables[0]
}

// readingNote says in an answer how its table was read again.
func readingNote(f *catalog.File, t *catalog.Table) string {
	var others []string
	for _, o := range f.Tables {
		if o.ID != t.ID {
			others = append(others, fmt.Sprintf("%q (%s, %d rows)", o.Name, o.ID, o.RowCount))
		}
	}
	s := fmt.Sprintf("%s was read again as asked (%s) into file %s; this answer is on its table %q (%s, %d rows, %d columns)",
		f.Filename, t.Report.ReadAs, f.ID, t.Name, t.ID, t.RowCount, len(t.Columns))
	if len(others) > 0 {
		s += "; its other tables: " + strings.Join(others, ", ")
	}
	return s
}

// tableNotes are the notes an answer on table t carries about how its
// file was read: given a file's id (asked), the table that answered and
// the file's other tables; and a header the import was not sure of.
func tableNotes(ctx context.Context, store *engine.Store, asked string, t *catalog.Table) []string {
	var notes []string
	if asked != t.ID {
		if f, err := store.File(ctx, asked); err == nil && len(f.Tables) > 1 {
			var others []string
			for _, o := range f.Tables[1:] {
				others = append(others, fmt.Sprintf("%q (%s, %d rows)", o.Name, o.ID, o.RowCount))
			}
			notes = append(notes, fmt.Sprintf("file_id %s is %s, whose first table %q (%s) answered; its other tables: %s. Give a table's id as file_id to ask it",
				f.ID, f.Filename, t.Name, t.ID, strings.Join(others, ", ")))
		}
	}
	if u := uncertainHeader(t); u != "" {
		notes = append(notes, "how the table was read: "+u)
	}
	return notes
}
