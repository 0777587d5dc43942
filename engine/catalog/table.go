package catalog

import (
	"fmt"
	"strings"
	"time"

	"datadesk/engine/typing"
)

// File is a stored file as the catalog knows it.
type File struct {
	ID          string    `json:"id"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	ChatSession string    `json:"chat_session_id"`
	CreatedAt   time.Time `json:"created_at"`
	// Tables are the tables ingested from the file, in sheet order.
	Tables []Table `json:"tables,omitempty"`
}

// Table is a stored table: one sheet of a workbook, or a whole CSV or JSON
// file.
type Table struct {
	ID        string    `json:"id"`
	FileID    string    `json:"file_id"`
	Name      string    `json:"name"`
	Ordinal   int       `json:"ordinal"`
	RowCount  int64     `json:"row_count"`
	Columns   []Column  `json:"columns"`
	Report    Report    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	// SourceTableID and Query are set for a view derived by a query: the
	// table it came from and the query's arguments as JSON.
	SourceTableID string `json:"source_table_id,omitempty"`
	Query         string `json:"query,omitempty"`
	// Location says where the rows live: duckdb (the owner's file) or
	// clickhouse (the cluster).
	Location string `json:"location"`
}

// Column describes one column of a stored table.
type Column struct {
	// Key is the column's name in queries: cleaned, unique case-insensitively.
	Key string `json:"key"`
	// Label is the header as the file had it.
	Label string `json:"label"`
	// Type is one of text, integer, decimal, double, boolean, date, timestamp.
	Type string `json:"type"`
	// Identifier marks text columns of codes, ids, postcodes or phone numbers.
	Identifier bool   `json:"identifier"`
	Reason     string `json:"reason"`
	// Unit is the column's unit as the header's units row says it ("£",
	// "%"), or "".
	Unit string `json:"unit,omitempty"`
	// Blank and Trimmed count, for the import report of a load, the cells
	// of only spaces stored empty and the text values stored without the
	// spaces around them.
	Blank   int64 `json:"-"`
	Trimmed int64 `json:"-"`
	// Numberish marks, during a load, a text column to read again for
	// numbers among marks of missing values or of many digits.
	Numberish bool `json:"-"`
	// Digits is what the load found of an identifier column's values:
	// whether each is digits alone, which spares their natural order
	// the test of every value.
	Digits Digits `json:"-"`
}

// Digits is what the load found of an identifier column's values.
type Digits uint8

const (
	// DigitsUnknown: not measured, or values of digits alone beside
	// others (the general natural order).
	DigitsUnknown Digits = iota
	// DigitsFixed: every value is digits alone, all of one length, as
	// zero-padded codes are; their text order is their natural order.
	DigitsFixed
	// DigitsVarying: every value is digits alone, of 1 to 38 of them
	// (any fits an unsigned 128-bit number), of several lengths, some
	// with a leading zero.
	DigitsVarying
	// DigitsPlain: every value is digits alone, of several lengths up
	// to 38, none with a leading zero (but "0"): a longer one is a
	// larger number, those of one length compare as text, and each is
	// the text of its number.
	DigitsPlain
	// DigitsNone: no value is digits alone (codes such as INV-001):
	// their text order is their natural order.
	DigitsNone
)

// Ordering is how a column's values sort.
type Ordering uint8

const (
	// ByText compares values as they are: numbers, dates, and text byte
	// by byte.
	ByText Ordering = iota
	// ByNatural orders values of digits alone by their number, before
	// other values, which follow as text; equal numbers ("007", "7")
	// then by their text.
	ByNatural
	// ByNumber is ByNatural for a column whose every value is digits
	// alone and fits an unsigned 128-bit number: by number, then text.
	ByNumber
	// ByLength is ByNatural for a column whose every value is digits
	// alone without a leading zero (DigitsPlain): by length, then text.
	ByLength
)

// Ordering is how the column's values sort: an identifier column of
// text orders as people number things (1, 2, 10, not 1, 10, 2) while
// staying text, unless its values are digits of one length, or none is
// digits, whose text order is that order already.
func (c *Column) Ordering() Ordering {
	switch {
	case c.Type != typing.TypeText || !c.Identifier || c.Digits == DigitsFixed || c.Digits == DigitsNone:
		return ByText
	case c.Digits == DigitsVarying:
		return ByNumber
	case c.Digits == DigitsPlain:
		return ByLength
	}
	return ByNatural
}

// Natural reports whether the column's values order otherwise than as
// text (Ordering).
func (c *Column) Natural() bool { return c.Ordering() != ByText }

// typeSaid is the column's type for an error, with why the import chose
// it when it is text: a measure refused on a text column says what made
// the column text ("text: 2 of 300 values are not numbers").
func (c *Column) typeSaid() string {
	if c.Type != typing.TypeText || c.Reason == "" || c.Reason == "text" {
		return c.Type
	}
	return fmt.Sprintf("%s (the import found %s)", c.Type, strings.TrimPrefix(c.Reason, "text: "))
}

// Report is what an ingest did to one table.
type Report struct {
	Table        string         `json:"table"`
	RowsRead     int64          `json:"rows_read"`
	RowsStored   int64          `json:"rows_stored"`
	RowsRejected int64          `json:"rows_rejected"`
	Rejects      []Reject       `json:"rejects,omitempty"`
	Columns      []ColumnReport `json:"columns"`
	Notes        []string       `json:"notes,omitempty"`
	// Skipped lists the rows kept out of the table, each with its text.
	Skipped []SkippedRow `json:"skipped_rows,omitempty"`
	// HeaderRow is the header's row in the sheet or file, from 1 (its
	// last when several rows make it, HeaderRows); HeaderAsked, that the
	// person who stored the file named them.
	HeaderRow   int64   `json:"header_row,omitempty"`
	HeaderRows  []int64 `json:"header_rows,omitempty"`
	HeaderAsked bool    `json:"header_asked,omitempty"`
	// Sheet is the sheet the table was read from.
	Sheet string `json:"sheet,omitempty"`
	// ReadAs says how a person asked the file to be read again.
	ReadAs string `json:"read_as,omitempty"`
	// Cleared lists the cells of a numeric or date column that held other
	// text (a note such as "Series discontinued"), stored empty.
	Cleared []ClearedCell `json:"cleared_cells,omitempty"`
}

// ClearedCell is a cell of a numeric or date column that held a note
// rather than a value, stored empty.
type ClearedCell struct {
	// Row is the cell's row in the sheet or file, from 1, where the load
	// knows it; TableRow its row in the table, from 1.
	Row      int64  `json:"row,omitempty"`
	TableRow int64  `json:"table_row"`
	Column   string `json:"column"`
	Text     string `json:"text"`
}

// ColumnReport is one column's type decision, and what the load changed
// of its values: cells of only spaces stored empty, and text values stored
// without the spaces around them (the stored file keeps every byte).
type ColumnReport struct {
	Key           string `json:"key"`
	Label         string `json:"label"`
	Type          string `json:"type"`
	Identifier    bool   `json:"identifier,omitempty"`
	Reason        string `json:"reason"`
	Unit          string `json:"unit,omitempty"`
	BlankCells    int64  `json:"blank_cells,omitempty"`
	TrimmedValues int64  `json:"trimmed_values,omitempty"`
}

// ReportOf is column c's report.
func ReportOf(c Column) ColumnReport {
	return ColumnReport{Key: c.Key, Label: c.Label, Type: c.Type, Identifier: c.Identifier, Reason: c.Reason, Unit: c.Unit,
		BlankCells: c.Blank, TrimmedValues: c.Trimmed}
}

// SkippedRow is a row of a file kept out of its table: a title or note
// above the header, or a note below the data.
type SkippedRow struct {
	// Row is the row's number in the sheet or file, from 1.
	Row int64 `json:"row"`
	// Where is above (the header), below (the data), section (a label
	// alone in a row inside the data), repeated header, or asked (a row
	// the reader of the file named).
	Where string `json:"where"`
	// Text is the row's values, joined by " | ".
	Text string `json:"text"`
}

// Reject is a row that could not be stored, with why.
type Reject struct {
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}
