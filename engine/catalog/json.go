package catalog

import (
	"encoding/json"
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
// strings, text as strings, NULL as null.
func JSONValue(v any, typ string) any {
	switch x := v.(type) {
	case nil:
		return nil
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
