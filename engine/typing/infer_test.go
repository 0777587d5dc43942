package typing

import (
	"strings"
	"testing"
)

// TestDecideColumn: types that never lose data, decided from the values
// alone, with the reason a person reads.
func TestDecideColumn(t *testing.T) {
	cases := []struct {
		name, key  string
		values     []string
		h          Hint
		typ        string
		identifier bool
		says       string
	}{
		{"whole numbers", "qty", []string{"1", "22", "-3"}, Hint{}, TypeInteger, false, "whole numbers"},
		{"money", "amount", []string{"1.50", "22.25", "3"}, Hint{}, TypeDecimal, false, ""},
		// Past 15 digits a number is text until the loader proves each value
		// prints back as written from a double; with a point, never an
		// identifier.
		{"seventeen digits", "gdp", []string{"12345.678901234567", "0.1", "3"}, Hint{}, TypeText, false, "more than 15 significant digits"},
		{"leading zeros stay text", "zip", []string{"02134", "10001"}, Hint{}, TypeText, true, ""},
		{"an identifier by its name", "customer_id", []string{"1001", "1002"}, Hint{}, TypeText, true, ""},
		{"dates", "day", []string{"2024-01-31", "2024-02-01"}, Hint{}, TypeDate, false, ""},
		{"timestamps", "at", []string{"2024-01-31 10:00:00", "2024-02-01T11:30:00"}, Hint{}, TypeTimestamp, false, ""},
		{"booleans", "paid", []string{"true", "FALSE"}, Hint{}, TypeBoolean, false, ""},
		{"numbers and a word", "qty", []string{"1", "2", "many"}, Hint{}, TypeText, false, "1 of 3 values are not numbers"},
		{"empty cells do not decide", "qty", []string{"1", "", "3"}, Hint{}, TypeInteger, false, ""},
		{"JSON strings stay text", "qty", []string{"1", "2"}, Hint{NoNumbers: true}, TypeText, false, ""},
		{"phone numbers", "phone", []string{"+1 (555) 010-9999", "555-0100"}, Hint{}, TypeText, true, "phone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			typ, ident, reason := DecideColumn(c.key, c.values, c.h)
			if typ != c.typ || ident != c.identifier {
				t.Errorf("got %s (identifier %v, %q), want %s (identifier %v)", typ, ident, reason, c.typ, c.identifier)
			}
			if !strings.Contains(reason, c.says) {
				t.Errorf("reason %q does not say %q", reason, c.says)
			}
		})
	}
}

// TestColumnKeys: header labels become keys a query can name, unique
// case-insensitively and never the engine's own names.
func TestColumnKeys(t *testing.T) {
	cases := []struct {
		labels []string
		want   string
	}{
		{[]string{"Order ID", "Amount ($)", "amount"}, "order_id,amount,amount_2"},
		{[]string{"", "  ", "x"}, "column_1,column_2,x"},
		{[]string{"rowid", "__row", "Région"}, "rowid_2,row,région"},
		{[]string{"a\x00b", "Tab\tName"}, "ab,tabname"},
		{[]string{strings.Repeat("long ", 40)}, strings.TrimSuffix(strings.Repeat("long_", 13), "_")},
	}
	for _, c := range cases {
		if got := strings.Join(ColumnKeys(c.labels), ","); got != c.want {
			t.Errorf("%q: got %s, want %s", c.labels, got, c.want)
		}
	}
}
