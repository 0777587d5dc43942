package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"time"

	"datadesk/engine/typing"
)

// TimestampLayout is how a timestamp is written as text everywhere data
// leaves the engine: ISO 8601 with the fractional seconds it has, up to
// microseconds (what a timestamp keeps).
const TimestampLayout = "2006-01-02T15:04:05.999999"

// TimeLayout is how a time of day is written as text: as DuckDB writes a
// TIME, with the fractional seconds it has.
const TimeLayout = "15:04:05.999999"

// JSONValue turns a scanned value into what JSON should carry:
// numbers as numbers (big integers exactly, as json.Number), dates as ISO
// strings, text as strings, NULL as null. NaN and the infinities, which
// JSON has no number for, are the text "NaN", "Infinity" and "-Infinity",
// as exports write them; an answer says which columns hold such a value
// (notFiniteNotes).
func JSONValue(v any, typ string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case float64:
		if t, ok := notFiniteText(x); ok {
			return t
		}
		return x
	case time.Time:
		switch typ {
		case typing.TypeDate:
			return x.Format("2006-01-02")
		case typing.TypeTime:
			return x.Format(TimeLayout)
		}
		return x.Format(TimestampLayout)
	case *big.Int:
		return json.Number(x.String())
	case []byte:
		return string(x)
	}
	return v
}

// notFiniteText is how NaN and the infinities are written as text.
func notFiniteText(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

// numeric reports whether a catalog type's values are numbers.
func numeric(typ string) bool {
	return typ == typing.TypeInteger || typ == typing.TypeDecimal || typ == typing.TypeDouble
}

// notFiniteNote says that column name's values, n of them, were past a
// double's range or not a number, and are written as text.
func notFiniteNote(name string, n int) string {
	return fmt.Sprintf("%s: %d value(s) past the range of a double (about ±1.8e308) or not a number (0/0 of doubles), "+
		"written \"Infinity\", \"-Infinity\" or \"NaN\": the computation overflowed; scale the inputs down (divide before multiplying or summing)", name, n)
}

// notFiniteNotes names each numeric column of rows holding text, which
// only NaN or an infinity written by JSONValue can be.
func notFiniteNotes(names []string, typeOf func(i int) string, rows [][]any) []string {
	var notes []string
	for i, name := range names {
		if !numeric(typeOf(i)) {
			continue
		}
		n := 0
		for _, r := range rows {
			if _, ok := r[i].(string); ok {
				n++
			}
		}
		if n > 0 {
			notes = append(notes, notFiniteNote(name, n))
		}
	}
	return notes
}
