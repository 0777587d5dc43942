package engine

import (
	"database/sql"
	"fmt"
	"testing"

	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// TestCleanCastAsTextCast holds what the query appender stores (a value
// cleaned in Go, ducksql.CleanValue, then ducksql.CleanCast) to what
// TextCast makes of the raw value in SQL, for each kind of decision and
// raw values with spaces around them, of only spaces, empty and NULL, in
// DuckDB itself: the same value, or an error from both.
func TestCleanCastAsTextCast(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dollar := &typing.WrittenForm{Currency: "$", Grouped: true, Paren: true}
	decisions := []typing.Decision{
		{Type: typing.TypeInteger},
		{Type: typing.TypeInteger, Trimmed: true},
		{Type: typing.TypeDecimal, SQLType: "DECIMAL(18,2)"},
		{Type: typing.TypeDecimal, SQLType: "DECIMAL(18,2)", Written: dollar},
		{Type: typing.TypeDecimal, SQLType: "DECIMAL(18,4)", Written: &typing.WrittenForm{Percent: true}},
		{Type: typing.TypeDouble},
		{Type: typing.TypeDouble, Written: &typing.WrittenForm{Percent: true, Grouped: true}},
		{Type: typing.TypeBoolean},
		{Type: typing.TypeDate},
		{Type: typing.TypeDate, Format: "%d/%m/%Y"},
		{Type: typing.TypeDate, Reason: "date: spreadsheet dates"},
		{Type: typing.TypeTimestamp},
		{Type: typing.TypeTimestamp, UTC: true},
		{Type: typing.TypeTimestamp, Reason: "timestamp: spreadsheet dates", Serial1904: true},
		{Type: typing.TypeTime},
		{Type: typing.TypeText},
		{Type: typing.TypeText, KeepEmpty: true},
	}
	raws := []any{nil, "", " ", " \t\r\n", "12", " 12 ", "\t-3\n", "1,234.50", "$1,234.50", " ($12.00) ", "45%", "1,045.5%",
		"true", " FALSE ", "2024-03-05", " 05/03/2024 ", "45000.5", " 61 ", "2024-03-05 10:11:12", "2024-03-05T10:11:12+02:00 ",
		"10:11:12", " hello ", "x\x01", "\x01x ", "héllo \u00a0 ", "a  b", "\v\f"}
	for _, d := range decisions {
		for _, raw := range raws {
			if s, ok := raw.(string); ok && d.Trimmed && typing.TrimValue(s) != s {
				continue // a Trimmed decision's values come trimmed
			}
			want, wantErr := castOne(db, ducksql.TextCast(d, "c1"), raw)
			var clean any
			if s, ok := raw.(string); ok {
				clean = ducksql.CleanValue(d, s)
			}
			got, gotErr := castOne(db, ducksql.CleanCast(d, "c1"), clean)
			if (wantErr != nil) != (gotErr != nil) || got != want {
				t.Errorf("%s %+v of %q: cleaned %q gives %q (%v), the raw value %q (%v)", d.Type, d, raw, clean, got, gotErr, want, wantErr)
			}
		}
	}
}

// TestEdgedTextAsTextCast holds the text the direct load stores, from a
// value's Edge code computed beside it, to TextCast of the raw value.
func TestEdgedTextAsTextCast(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raws := []any{nil, "", " ", " \t\r\n", "\v\f", "a", " a", "a ", "\ta\n", "x\x01", "\x01x ", "\x01", "\x1f", "héllo \u00a0 ",
		"\u00a0", "a  b", "!", "  two  words  "}
	for _, keepEmpty := range []bool{false, true} {
		d := typing.Decision{Type: typing.TypeText, KeepEmpty: keepEmpty}
		for _, raw := range raws {
			want, wantErr := castOne(db, ducksql.TextCast(d, "c1"), raw)
			got, gotErr := castOne(db, ducksql.EdgedText("c1", "("+ducksql.Edge("c1")+")", keepEmpty), raw)
			if wantErr != nil || gotErr != nil || got != want {
				t.Errorf("keep empty %v, %q: %s (%v), TextCast %s (%v)", keepEmpty, raw, got, gotErr, want, wantErr)
			}
		}
	}
}

// castOne is expr over a column c1 holding v, as text ("NULL" for none).
func castOne(db *sql.DB, expr string, v any) (string, error) {
	var out sql.NullString
	err := db.QueryRow(`SELECT CAST(`+expr+` AS VARCHAR) FROM (SELECT CAST(? AS VARCHAR) AS c1)`, v).Scan(&out)
	if err != nil {
		return "", err
	}
	if !out.Valid {
		return "NULL", nil
	}
	return fmt.Sprintf("%q", out.String), nil
}
