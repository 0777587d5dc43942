package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"datadesk"

	"datadesk/engine/catalog"
)

// Probes ask what the engine relies on: the DuckDB instance and the
// data directory (owners' storage, with at least minFree bytes free), and
// each part of a remote backend that can say.
func (e *Engine) Probes(minFree uint64) []catalog.Probe {
	probes := []catalog.Probe{{Name: "owners' storage", Run: func(ctx context.Context) error {
		var one int
		if err := e.hub.ctl.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return fmt.Errorf("the DuckDB instance does not answer: %w", err)
		}
		return RoomIn(filepath.Join(e.cfg.Dir, "owners"), minFree)
	}}}
	if h, ok := e.cfg.Remote.(catalog.HealthChecker); ok {
		probes = append(probes, h.Probes()...)
	}
	return probes
}

// RoomIn reports whether dir can be written and has at least minFree
// bytes free: creating an empty file succeeds on a full disk.
func RoomIn(dir string, minFree uint64) error {
	if err := WritableDir(dir); err != nil {
		return err
	}
	free, err := FreeBytes(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if free < minFree {
		return fmt.Errorf("%s has %s free, less than the %s kept for loads and moves", dir, mib(free), mib(minFree))
	}
	return nil
}

// FreeBytes is how many bytes the file system of dir has free for this
// process.
func FreeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

func mib(n uint64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

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

// ZooKeeperProbe is the remote backend's probe of ZooKeeper, when its
// tables are replicated through one.
func (e *Engine) ZooKeeperProbe() (func(context.Context) error, bool) {
	h, ok := e.cfg.Remote.(catalog.HealthChecker)
	if !ok {
		return nil, false
	}
	for _, p := range h.Probes() {
		if strings.HasPrefix(p.Name, "zookeeper") {
			return p.Run, true
		}
	}
	return nil, false
}

// RemoteNodeProbes ping each node of the remote backend, if it has
// nodes, each probe named by its node.
func (e *Engine) RemoteNodeProbes() ([]catalog.Probe, bool) {
	n, ok := e.cfg.Remote.(interface{ NodeProbes() []catalog.Probe })
	if !ok {
		return nil, false
	}
	return n.NodeProbes(), true
}

// RemoteFailures is how many statements the remote backend failed
// after trying every node that could run them, and how many times a node
// failed one that the next node was then asked (failovers), if it counts
// them.
func (e *Engine) RemoteFailures() (failed, failovers int64, ok bool) {
	f, ok := e.cfg.Remote.(interface {
		Failures() int64
		Failovers() int64
	})
	if !ok {
		return 0, 0, false
	}
	return f.Failures(), f.Failovers(), true
}

// NoSpace reports whether err says a disk is full: the system's ENOSPC,
// or DuckDB's message for it.
func NoSpace(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "No space left on device") || strings.Contains(msg, "Disk quota exceeded") || strings.Contains(msg, "could not write all bytes")
}

// NoSpaceError is the answer to a write a full disk refused: the server's,
// not the request's (503), saying so.
func NoSpaceError(err error) error {
	return datadesk.Errorf(datadesk.Unavailable, "the server's disk is full, so nothing was stored; try again once an operator has freed space").WithCause(err)
}
