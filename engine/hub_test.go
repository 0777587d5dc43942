package engine

import (
	"errors"
	"fmt"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// TestAttachAgain: an ATTACH is made again on the states of a database
// file that pass, as DuckDB words them, and on nothing else.
func TestAttachAgain(t *testing.T) {
	wal := `Cannot open file "/tmp/d/owners/u_x/owner.duckdb.wal": No such file or directory`
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"detached a moment ago", &duckdb.Error{Type: duckdb.ErrorTypeBinder, Msg: `Binder Error: Unique file handle conflict: Database "u_x" is already attached with path "/tmp/d/owners/u_x/owner.duckdb"`}, true},
		{"closed by another instance", &duckdb.Error{Type: duckdb.ErrorTypeIO, Msg: "IO Error: " + wal}, true},
		{"wrapped", fmt.Errorf("engine: open u_x: %w", &duckdb.Error{Type: duckdb.ErrorTypeIO, Msg: "IO Error: " + wal}), true},
		{"the database file missing", &duckdb.Error{Type: duckdb.ErrorTypeIO, Msg: `IO Error: Cannot open file "/tmp/d/owners/u_x/owner.duckdb": No such file or directory`}, false},
		{"a full disk", &duckdb.Error{Type: duckdb.ErrorTypeIO, Msg: `IO Error: Could not write file "/tmp/d/owners/u_x/owner.duckdb.wal": No space left on device`}, false},
		{"another binder error", &duckdb.Error{Type: duckdb.ErrorTypeBinder, Msg: "Binder Error: something else"}, false},
		{"not DuckDB's", errors.New(wal), false},
	} {
		if got := attachAgain(c.err); got != c.want {
			t.Errorf("%s: attachAgain %v, want %v", c.name, got, c.want)
		}
	}
}
