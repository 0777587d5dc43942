package clickhouse

import (
	"bytes"
	"math/big"
	"testing"
)

func TestScaledDecimal(t *testing.T) {
	tests := []struct {
		in    string
		scale int
		want  string // "" for an error
	}{
		{"12.50", 2, "1250"},
		{"12.5", 2, "1250"},
		{"-0.05", 2, "-5"},
		{"3", 2, "300"},
		{"+7.1", 1, "71"},
		{"1.234", 2, ""},
		{"x", 2, ""},
		{"999999999999999999", 0, "999999999999999999"},
	}
	for _, tc := range tests {
		got, err := scaledDecimal(tc.in, tc.scale)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("scaledDecimal(%q, %d) = %v, want an error", tc.in, tc.scale, got)
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("scaledDecimal(%q, %d) = %v, %v; want %s", tc.in, tc.scale, got, err, tc.want)
		}
	}
}

func TestAppendInt128(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want []byte
	}{
		{1, append([]byte{1}, make([]byte, 15)...)},
		{-1, bytes.Repeat([]byte{0xff}, 16)},
		{-2, append([]byte{0xfe}, bytes.Repeat([]byte{0xff}, 15)...)},
	} {
		if got := appendInt128(nil, big.NewInt(tc.in)); !bytes.Equal(got, tc.want) {
			t.Errorf("appendInt128(%d) = %x, want %x", tc.in, got, tc.want)
		}
	}
}

func TestChLiteralAndTSV(t *testing.T) {
	for in, want := range map[string]string{
		"O'Brien":      `'O\'Brien'`,
		`a\b`:          `'a\\b'`,
		"tab\there\n":  `'tab\x09here\x0A'`,
		"nul\x00":      `'nul\x00'`,
		"Ünïcode":      `'Ünïcode'`,
		"'; DROP x --": `'\'; DROP x --'`,
	} {
		if got := chLiteral(in); got != want {
			t.Errorf("chLiteral(%q) = %s, want %s", in, got, want)
		}
	}
	if got := tsvUnescape(`a\tb\\c\nd\'e`); got != "a\tb\\c\nd'e" {
		t.Errorf("tsvUnescape: %q", got)
	}
	if got := chIdent("we`ird\\"); got != "`we\\`ird\\\\`" {
		t.Errorf("chIdent: %s", got)
	}
}
