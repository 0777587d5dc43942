package bench

import (
	"context"
	"strconv"
	"testing"

	"datadesk/engine"
)

// TestBaselineLaidOutAsOwners: the benchmarks' baseline stores its tables
// as owners' databases do, so that a ratio against it measures the
// engine's work and not a storage layout.
func TestBaselineLaidOutAsOwners(t *testing.T) {
	dir := t.TempDir()
	b, err := OpenBaseline(context.Background(), engine.Config{}, dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var size int64
	if err := b.db.QueryRow(`SELECT block_size FROM pragma_database_size() WHERE database_name = current_database()`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if want := engine.InstanceSettings(engine.Config{}).Get("default_block_size"); strconv.FormatInt(size, 10) != want {
		t.Errorf("the baseline's blocks are of %d bytes, want %s", size, want)
	}
	if err := b.AppendStrings(context.Background(), "t", 2, func(yield func([]string) error) error {
		return yield([]string{"a", ""})
	}); err != nil {
		t.Fatal(err)
	}
}
