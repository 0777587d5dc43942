package ingest

import (
	"testing"

	"datadesk/engine/typing"
)

// TestFormatKind classifies number formats as xlrd's formatting.py and
// openpyxl's styles/numbers.py do, with an elapsed time a number.
func TestFormatKind(t *testing.T) {
	tests := []struct {
		id   int
		code string
		want fmtKind
	}{
		{0, "", fmtNumber},
		{2, "", fmtNumber},
		{10, "", fmtNumber},
		{14, "", fmtDate},
		{22, "", fmtDateTime},
		{18, "", fmtTime},
		{46, "", fmtNumber}, // [h]:mm:ss, an elapsed time
		{31, "", fmtDate},
		{49, "", fmtNumber},
		{164, "0.00", fmtNumber},
		{164, "0%", fmtNumber},
		{164, "0.00E+00", fmtNumber},
		{164, "#,##0.00 \"days\"", fmtNumber},
		{164, `[$€-407] #,##0.00`, fmtNumber},
		{164, "[Red]0.00;[Blue]-0.00", fmtNumber},
		{164, "General", fmtNumber},
		{164, "@", fmtNumber},
		{164, "dd/mm/yyyy", fmtDate},
		{164, "yyyy-mm-dd;@", fmtDate},
		{164, `[$-409]d\-mmm\-yyyy;@`, fmtDate},
		{164, "mmm", fmtDate},
		{164, "D", fmtDate},
		{164, "yyyy-mm-dd hh:mm:ss", fmtDateTime},
		{164, "h:mm AM/PM", fmtTime},
		{164, "mm:ss.0", fmtTime},
		{164, "HH[M]", fmtTime},
		{164, "[h]:mm:ss", fmtNumber},
		{164, "[mm]:ss", fmtNumber},
		{164, "A/P", fmtNumber},
		{164, `"y"0`, fmtNumber},
		{164, `\d0`, fmtNumber},
	}
	for _, tc := range tests {
		if got := formatKind(tc.id, tc.code); got != tc.want {
			t.Errorf("formatKind(%d, %q): got %d, want %d", tc.id, tc.code, got, tc.want)
		}
	}
}

// TestNumberCell renders day numbers in both date systems, with Lotus's
// phantom 1900-02-29 and milliseconds.
func TestNumberCell(t *testing.T) {
	tests := []struct {
		v        float64
		fk       fmtKind
		date1904 bool
		text     string
		kind     typing.CellKind
	}{
		{44105, fmtDate, false, "2020-10-01", typing.KindDate},
		{1, fmtDate, false, "1900-01-01", typing.KindDate},
		{59, fmtDate, false, "1900-02-28", typing.KindDate},
		{61, fmtDate, false, "1900-03-01", typing.KindDate},
		{43830, fmtDate, true, "2024-01-01", typing.KindDate},
		{44105.35416666667, fmtDateTime, false, "2020-10-01T08:30:00", typing.KindDateTime},
		{44105, fmtDateTime, false, "2020-10-01T00:00:00", typing.KindDateTime},
		{44105, fmtTime, false, "2020-10-01", typing.KindDate},
		{44105.5000011574, fmtDateTime, false, "2020-10-01T12:00:00.1", typing.KindDateTime},
		{0.354166666666667, fmtTime, false, "08:30:00", typing.KindTime},
		{0.99999999999, fmtTime, false, "1900-01-01", typing.KindDate},
		{-1.5, fmtDate, false, "-1.5", typing.KindNumber},
		{2958466, fmtDate, false, "2958466", typing.KindNumber},
		{0.1, fmtNumber, false, "0.1", typing.KindNumber},
		{45717.395833333336, fmtNumber, false, "45717.395833333336", typing.KindNumber},
		{1e-25, fmtNumber, false, "1e-25", typing.KindNumber},
		{-0.0, fmtNumber, false, "0", typing.KindNumber},
	}
	for _, tc := range tests {
		text, kind := numberCell(tc.v, tc.fk, tc.date1904)
		if text != tc.text || kind != tc.kind {
			t.Errorf("numberCell(%v, %d, %v): got %s %d, want %s %d", tc.v, tc.fk, tc.date1904, text, kind, tc.text, tc.kind)
		}
	}
}
