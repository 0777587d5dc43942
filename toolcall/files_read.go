package toolcall

import (
	"context"
	"strings"
	"time"

	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/rbac"
)

// readArgs are files.read's arguments.
type readArgs struct {
	FileID      string `json:"file_id"`
	SessionOnly *bool  `json:"session_only"`
	Limit       int    `json:"limit"`
}

// preview tells a chat UI how to display a file.
type preview struct {
	Type       string `json:"type"` // image or table
	URL        string `json:"url"`
	TableID    string `json:"table_id,omitempty"`
	RowCount   int64  `json:"row_count,omitempty"`
	ColumnCnt  int    `json:"column_count,omitempty"`
	ContentTyp string `json:"content_type,omitempty"`
}

// listedFile is a file in files.read's list: what a model needs to pick a
// file and hand out its link, and no more. The file's id is also its first
// table's id for files.query_table; reading one file by id gives the whole
// descriptor with its preview.
type listedFile struct {
	ID          string        `json:"id"`
	Filename    string        `json:"filename"`
	ContentType string        `json:"content_type"`
	Size        int64         `json:"size"`
	CreatedAt   time.Time     `json:"created_at"`
	DownloadURL string        `json:"download_url"`
	RowCount    *int64        `json:"row_count,omitempty"`
	ColumnCount *int          `json:"column_count,omitempty"`
	Tables      []listedTable `json:"tables,omitempty"`
}

// listedTable is one of a file's tables, listed when the file has
// several or its one table was read otherwise than from its first row:
// its sheet, its header rows, the rows kept out, and whether the header
// was uncertain. Reading the file by id gives the whole reading.
type listedTable struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Sheet       string  `json:"sheet,omitempty"`
	RowCount    int64   `json:"row_count"`
	ColumnCount int     `json:"column_count"`
	HeaderRows  []int64 `json:"header_rows,omitempty"`
	RowsKeptOut int     `json:"rows_kept_out,omitempty"`
	Uncertain   string  `json:"uncertain,omitempty"`
}

// uncertainHeader is the import's note that a table's header may be
// another row, or "".
func uncertainHeader(t *catalog.Table) string {
	for _, n := range t.Report.Notes {
		if strings.HasPrefix(n, "the header was not certain") {
			return n
		}
	}
	return ""
}

// readOtherwise reports whether a table was read otherwise than a plain
// file is: rows kept out, a header of several rows or past the first,
// or a header the import was not sure of.
func readOtherwise(t *catalog.Table) bool {
	r := t.Report
	return len(r.Skipped) > 0 || len(r.HeaderRows) > 1 || r.HeaderRow > 1 || uncertainHeader(t) != "" || len(r.Cleared) > 0
}

func (p *Pipeline) listed(owner string, f *catalog.File) listedFile {
	// The media type without its parameters: a charset is the download's
	// business, not the model's.
	ct, _, _ := strings.Cut(f.ContentType, ";")
	lf := listedFile{ID: f.ID, Filename: f.Filename, ContentType: ct, Size: f.Size,
		CreatedAt: f.CreatedAt.UTC().Truncate(time.Second), DownloadURL: p.cfg.Links.URL(f.ID, owner)}
	if len(f.Tables) > 0 {
		rows, cols := f.Tables[0].RowCount, len(f.Tables[0].Columns)
		lf.RowCount, lf.ColumnCount = &rows, &cols
	}
	if len(f.Tables) > 1 || len(f.Tables) == 1 && readOtherwise(&f.Tables[0]) {
		for i := range f.Tables {
			t := &f.Tables[i]
			lt := listedTable{ID: t.ID, Name: t.Name, Sheet: t.Report.Sheet, RowCount: t.RowCount, ColumnCount: len(t.Columns),
				HeaderRows: t.Report.HeaderRows, RowsKeptOut: len(t.Report.Skipped), Uncertain: uncertainHeader(t)}
			lf.Tables = append(lf.Tables, lt)
		}
	}
	return lf
}

// StoredResult is a table a call stored, with what made it in words.
type StoredResult struct {
	TableID       string    `json:"table_id"`
	Name          string    `json:"name"`
	RowCount      int64     `json:"row_count"`
	CreatedAt     time.Time `json:"created_at"`
	SourceTableID string    `json:"source_table_id"`
	Source        string    `json:"source"`
	MadeBy        string    `json:"made_by"`
}

// maxStoredResults is how many stored results a list of files names.
const maxStoredResults = 10

// StoredResults are the owner's newest stored results, each with its
// source table named and what made it in words.
func StoredResults(ctx context.Context, store *engine.Store, limit int) ([]StoredResult, error) {
	views, err := store.StoredResults(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]StoredResult, 0, len(views))
	for _, v := range views {
		r := StoredResult{TableID: v.ID, Name: v.Name, RowCount: v.RowCount, CreatedAt: v.CreatedAt.UTC().Truncate(time.Second),
			SourceTableID: v.SourceTableID, Source: "a table since deleted", MadeBy: catalog.DescribeQuery(v.Query)}
		if src, err := store.Table(ctx, v.SourceTableID); err == nil {
			r.Source = src.Name
		}
		out = append(out, r)
	}
	return out, nil
}

type readFile struct {
	File
	Preview *preview `json:"preview,omitempty"`
}

func (p *Pipeline) previewOf(owner string, f *catalog.File) *preview {
	d := Describe(p.cfg.Links, owner, f)
	if strings.HasPrefix(f.ContentType, "image/") {
		return &preview{Type: "image", URL: d.DownloadURL, ContentTyp: f.ContentType}
	}
	if len(f.Tables) > 0 {
		return &preview{Type: "table", URL: d.PreviewURL, TableID: d.TableID, RowCount: *d.RowCount, ColumnCnt: *d.ColumnCount}
	}
	return nil
}

// filesRead is files.read: the caller's files, or one of them, with their
// download links.
type filesRead struct{}

func (filesRead) spec() Tool {
	return Tool{Name: "files.read",
		Description: "List the current user's stored files and download links, or return one existing file's download link by file_id " +
			"(documents, archives, photos). Defaults to this chat session; session_only=false lists the user's other files. " +
			"Does not read arbitrary server/endpoint paths. Reading one photo file_id also displays its image preview in chat; " +
			"CSV/Excel files display interactive tables.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true}
}

func (filesRead) run(p *Pipeline, call *toolCall, args *Arguments) (any, error) {
	return p.toolFilesRead(call, args)
}

// filesRead's result is the caller's own; an approver sees nothing of it.
func (filesRead) summaryKeys() []string { return nil }

func (filesRead) text(r map[string]any, _ int) string {
	if f, ok := r["file"].(map[string]any); ok {
		return fileText(f)
	}
	return listText(r)
}

// toolFilesRead runs files.read: one file by id, or the caller's files,
// newest first, this chat session's unless session_only is false.
func (p *Pipeline) toolFilesRead(call *toolCall, args *Arguments) (any, error) {
	var a readArgs
	if err := args.bind(&a); err != nil {
		return nil, err
	}
	store := call.store
	ctx := call.ctx
	if a.FileID != "" {
		f, err := store.File(ctx, a.FileID)
		if err != nil {
			return nil, fileIDError(ctx, store, "file_id", a.FileID, err)
		}
		return map[string]any{"file": readFile{Describe(p.cfg.Links, call.caller.UserID, f), p.previewOf(call.caller.UserID, f)}}, nil
	}
	limit := a.Limit
	if limit == 0 {
		limit = 20
	}
	session := call.caller.ChatSession
	sessionOnly := a.SessionOnly == nil || *a.SessionOnly
	filter := ""
	if sessionOnly {
		filter = session
		if filter == "" {
			// Without a chat session there is no session to narrow to.
			sessionOnly = false
		}
	}
	files, err := store.Files(ctx, filter, limit)
	if err != nil {
		return nil, err
	}
	out := make([]listedFile, 0, len(files))
	for i := range files {
		out = append(out, p.listed(call.caller.UserID, &files[i]))
	}
	results, err := StoredResults(ctx, store, maxStoredResults)
	if err != nil {
		return nil, err
	}
	answer := map[string]any{"files": out, "session_only": sessionOnly, "chat_session_id": session}
	if len(results) > 0 {
		answer["stored_results"] = results
	}
	return answer, nil
}
