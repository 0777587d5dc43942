package toolcall

import (
	"encoding/json"
	"time"

	"datadesk/engine/catalog"
	"datadesk/links"
)

// File is a file as clients see it: the descriptor the API and the tools
// answer with.
type File struct {
	ID          string    `json:"id"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	CreatedAt   time.Time `json:"created_at"`
	ChatSession string    `json:"chat_session_id"`
	DownloadURL string    `json:"download_url"`
	TableID     string    `json:"table_id,omitempty"`
	RowCount    *int64    `json:"row_count,omitempty"`
	ColumnCount *int      `json:"column_count,omitempty"`
	PreviewURL  string    `json:"preview_url,omitempty"`
	// Tables lists every table of the file: one per non-empty sheet.
	Tables []TableSummary `json:"tables,omitempty"`
}

// TableSummary is one table of a file as clients see it: its size, where
// its rows are previewed, and how it was read.
type TableSummary struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	RowCount    int64  `json:"row_count"`
	ColumnCount int    `json:"column_count"`
	PreviewURL  string `json:"preview_url"`
	// How the table was read: its sheet, its header's row (its last,
	// when several rows make it: HeaderRows), whether a person named it,
	// how many rows were kept out and the first of them, the cells of a
	// numeric column stored empty, and the import's notes.
	Sheet       string               `json:"sheet,omitempty"`
	HeaderRow   int64                `json:"header_row,omitempty"`
	HeaderRows  []int64              `json:"header_rows,omitempty"`
	HeaderAsked bool                 `json:"header_asked,omitempty"`
	ReadAs      string               `json:"read_as,omitempty"`
	RowsKeptOut int                  `json:"rows_kept_out,omitempty"`
	KeptOut     []catalog.SkippedRow `json:"kept_out,omitempty"`
	CellsEmpty  int                  `json:"cells_stored_empty,omitempty"`
	Notes       []string             `json:"notes,omitempty"`
}

// Limits of a table's reading in a descriptor: the rest is in its import
// report (GET /v1/tables/{id}).
const (
	maxKeptOutShown = 5
	maxNotesShown   = 6
	maxNoteRunes    = 300
)

// summarize is a table as a file's descriptor lists it.
func summarize(t *catalog.Table) TableSummary {
	r := t.Report
	ts := TableSummary{ID: t.ID, Name: t.Name, RowCount: t.RowCount, ColumnCount: len(t.Columns), PreviewURL: PreviewURL(t.ID),
		Sheet: r.Sheet, HeaderRow: r.HeaderRow, HeaderAsked: r.HeaderAsked, ReadAs: r.ReadAs, RowsKeptOut: len(r.Skipped), CellsEmpty: len(r.Cleared)}
	if len(r.HeaderRows) > 1 {
		ts.HeaderRows = r.HeaderRows
	}
	ts.KeptOut = r.Skipped[:min(len(r.Skipped), maxKeptOutShown)]
	for _, n := range r.Notes {
		if len(ts.Notes) == maxNotesShown {
			break
		}
		if rs := []rune(n); len(rs) > maxNoteRunes {
			n = string(rs[:maxNoteRunes-1]) + "…"
		}
		ts.Notes = append(ts.Notes, n)
	}
	return ts
}

// TableSchema is a table's schema with its import report.
type TableSchema struct {
	ID         string           `json:"id"`
	FileID     string           `json:"file_id"`
	Name       string           `json:"name"`
	RowCount   int64            `json:"row_count"`
	Columns    []catalog.Column `json:"columns"`
	Report     catalog.Report   `json:"import_report"`
	RowsURL    string           `json:"rows_url"`
	PreviewURL string           `json:"preview_url"`
	// SourceTableID and Query are a derived view's provenance.
	SourceTableID string          `json:"source_table_id,omitempty"`
	Query         json.RawMessage `json:"query,omitempty"`
	// Location is where the rows live: duckdb or clickhouse.
	Location string `json:"location"`
}

// Describe returns a file's descriptor with a signed download URL for its
// owner.
func Describe(signer links.Signer, owner string, f *catalog.File) File {
	d := File{
		ID: f.ID, Filename: f.Filename, ContentType: f.ContentType, Size: f.Size, SHA256: f.SHA256,
		CreatedAt: f.CreatedAt, ChatSession: f.ChatSession,
		DownloadURL: signer.URL(f.ID, owner),
	}
	for i := range f.Tables {
		ts := summarize(&f.Tables[i])
		d.Tables = append(d.Tables, ts)
		if i == 0 {
			d.TableID, d.PreviewURL = ts.ID, ts.PreviewURL
			d.RowCount, d.ColumnCount = &ts.RowCount, &ts.ColumnCount
		}
	}
	return d
}

// PreviewURL is where a table's rows are read a page at a time.
func PreviewURL(tableID string) string { return "/v1/tables/" + tableID + "/rows" }

// SchemaOf is a table's schema as clients see it, with its import report.
func SchemaOf(t *catalog.Table) TableSchema {
	ts := TableSchema{ID: t.ID, FileID: t.FileID, Name: t.Name, RowCount: t.RowCount, Columns: t.Columns,
		Report: t.Report, RowsURL: PreviewURL(t.ID), PreviewURL: PreviewURL(t.ID), SourceTableID: t.SourceTableID, Location: t.Location}
	if t.Query != "" {
		ts.Query = json.RawMessage(t.Query)
	}
	return ts
}
