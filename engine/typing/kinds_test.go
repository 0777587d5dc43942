package typing

import "testing"

// TestDecideCells decides spreadsheet columns from their cells' kinds and
// texts.
func TestDecideCells(t *testing.T) {
	type cell struct {
		kind CellKind
		text string
	}
	dates := func(n int) []cell {
		var out []cell
		for i := 0; i < n; i++ {
			out = append(out, cell{KindDate, "2020-10-01"})
		}
		return out
	}
	tests := []struct {
		name, key string
		cells     []cell
		typ       string
		reason    string
	}{
		{"dates", "day", dates(3), TypeDate, "date: all 3 cells are dates"},
		{"dates and a total", "day", append(dates(24), cell{KindText, "Total"}), TypeText, `text: 24 dates and 1 text value ("Total")`},
		{"dates and date-times", "at", []cell{{KindDate, "2020-10-01"}, {KindDateTime, "2020-10-01T08:30:00"}}, TypeTimestamp, "timestamp: all 2 cells are dates or date-times"},
		{"booleans", "paid", []cell{{KindBool, "TRUE"}, {KindBool, "FALSE"}}, TypeBoolean, "boolean: all 2 cells are TRUE or FALSE"},
		{"numbers", "qty", []cell{{KindNumber, "1"}, {KindNumber, "2"}}, TypeInteger, "integer: all 2 values are whole numbers"},
		{"numbers stored as text too", "qty", []cell{{KindNumber, "1"}, {KindText, "2"}}, TypeInteger, "integer: all 2 values are whole numbers"},
		{"numbers and n/a", "score", []cell{{KindNumber, "1.5"}, {KindText, "n/a"}}, TypeText, `text: 1 number and 1 text value ("n/a")`},
		{"numbers and an error", "ratio", []cell{{KindNumber, "0.5"}, {KindError, "#DIV/0!"}}, TypeText, `text: 1 number and 1 error ("#DIV/0!")`},
		{"times of day", "opens", []cell{{KindTime, "08:30:00"}, {KindTime, "09:00:00"}}, TypeTime, "time: all 2 cells are times of day"},
		{"times of day and text", "opens", []cell{{KindTime, "08:30:00"}, {KindText, "closed"}}, TypeText, `text: 1 time of day and 1 text value ("closed")`},
		{"number ids", "customer_id", []cell{{KindNumber, "12"}, {KindNumber, "13"}}, TypeText, `text: whole numbers in a column named "customer_id" are identifiers`},
		{"blank text is empty", "day", append(dates(2), cell{KindText, "  "}), TypeDate, "date: all 2 cells are dates"},
		{"empty", "x", nil, TypeText, "text: the column has no values"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var k KindCounts
			var st Stats
			for _, c := range tc.cells {
				k.Add(c.kind, c.text)
				st.Add(c.text)
			}
			d := DecideCells(&k, &st, tc.key, Hint{})
			if d.Type != tc.typ || d.Reason != tc.reason {
				t.Errorf("got %s %q, want %s %q", d.Type, d.Reason, tc.typ, tc.reason)
			}
		})
	}
}
