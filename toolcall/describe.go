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
	// How the table was read: its header's row, whether a person named
	// it, and how many rows were kept out (the report lists them).
	HeaderRow   int64 `json:"header_row,omitempty"`
	HeaderAsked bool  `json:"header_asked,omitempty"`
	RowsKeptOut int   `json:"rows_kept_out,omitempty"`
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
	for i, t := range f.Tables {
		ts := TableSummary{ID: t.ID, Name: t.Name, RowCount: t.RowCount, ColumnCount: len(t.Columns), PreviewURL: PreviewURL(t.ID),
			HeaderRow: t.Report.HeaderRow, HeaderAsked: t.Report.HeaderAsked, RowsKeptOut: len(t.Report.Skipped)}
		d.Tables = append(d.Tables, ts)
		if i == 0 {
			d.TableID, d.PreviewURL = t.ID, ts.PreviewURL
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
