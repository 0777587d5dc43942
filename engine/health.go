package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"datadesk/engine/catalog"
)

// Health checks what the engine relies on: the DuckDB instance and the
// data directory (owners' storage), and each part of a remote backend
// that can say.
func (e *Engine) Health(ctx context.Context) []catalog.Check {
	checks := []catalog.Check{catalog.Timed("owners' storage", func() error {
		var one int
		if err := e.hub.ctl.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return fmt.Errorf("the DuckDB instance does not answer: %w", err)
		}
		return WritableDir(filepath.Join(e.cfg.Dir, "owners"))
	})}
	if h, ok := e.cfg.Remote.(catalog.HealthChecker); ok {
		checks = append(checks, h.Health(ctx)...)
	}
	return checks
}

// WritableDir reports whether a file can be made and removed in dir.
func WritableDir(dir string) error {
	f, err := os.CreateTemp(dir, ".ready-*")
	if err != nil {
		return fmt.Errorf("%s cannot be written: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

// MemoryBytes is what DuckDB holds in memory now, for every owner.
func (e *Engine) MemoryBytes(ctx context.Context) (int64, error) {
	var n int64
	if err := e.hub.ctl.QueryRowContext(ctx, "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()").Scan(&n); err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	return n, nil
}

// RemoteFailures is how many statements the remote backend failed, if it
// counts them.
func (e *Engine) RemoteFailures() (int64, bool) {
	f, ok := e.cfg.Remote.(interface{ Failures() int64 })
	if !ok {
		return 0, false
	}
	return f.Failures(), true
}
