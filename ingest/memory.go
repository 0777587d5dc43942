package ingest

import (
	"context"
	"runtime"
	"sync"
	"time"

	"datadesk"
)

// What a reader holds in memory beside a row at a time (today, a
// workbook's shared strings, which its sheets' cells point into) is
// counted as it is read against the memory every upload's readers may hold
// at once, Config.MaxReadMemory: a part of the node's memory limit the
// server gives them (an eighth of --memory-limit). A reader that needs
// more than all of it is refused (too_large); one that needs memory others
// hold waits for it, up to readMemoryWait, then is told to try again
// (unavailable).
const (
	// DefaultMaxReadMemory is MaxReadMemory's default: an eighth of the
	// default memory limit of 1 GB.
	DefaultMaxReadMemory = 128 << 20
	// readMemoryWait bounds how long a reader waits for memory others
	// hold.
	readMemoryWait = 10 * time.Second
	// readMemoryStep is the least a reader takes at a time, so that
	// counting costs nothing beside reading.
	readMemoryStep = 1 << 20
	// readMemoryCollect is the least memory given back that is collected
	// at once.
	readMemoryCollect = 32 << 20
)

// readMemory is the memory every upload's readers may hold at once.
type readMemory struct {
	limit int64
	wait  time.Duration

	mu   sync.Mutex
	used int64
	// freed is closed, and replaced, whenever memory is given back.
	freed chan struct{}
}

func newReadMemory(limit int64) *readMemory {
	return &readMemory{limit: limit, wait: readMemoryWait, freed: make(chan struct{})}
}

// hold is the memory one reader holds.
type hold struct {
	m    *readMemory
	ctx  context.Context
	held int64
}

func (m *readMemory) hold(ctx context.Context) *hold { return &hold{m: m, ctx: ctx} }

// need makes the reader's holding at least n bytes, waiting for memory
// others hold. Errors: too_large past the whole limit, unavailable when no
// memory frees up in time, the context's when it ends.
func (h *hold) need(n int64) error {
	if n <= h.held {
		return nil
	}
	if n > h.m.limit {
		return datadesk.Errorf(datadesk.TooLarge, "needs more than the %d MiB of memory an upload's reading may hold", h.m.limit>>20)
	}
	take := min(max(n-h.held, readMemoryStep, h.held), h.m.limit-h.held)
	timer := time.NewTimer(h.m.wait)
	defer timer.Stop()
	for {
		h.m.mu.Lock()
		if h.m.used+take <= h.m.limit {
			h.m.used += take
			h.held += take
			h.m.mu.Unlock()
			return nil
		}
		freed := h.m.freed
		h.m.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C:
			return datadesk.Errorf(datadesk.Unavailable, "waits for memory other uploads' reading holds; try again in a moment")
		case <-h.ctx.Done():
			return h.ctx.Err()
		}
	}
}

// release gives back all the reader holds; it may be called more than
// once.
func (h *hold) release() {
	if h == nil || h.held == 0 {
		return
	}
	if h.held >= readMemoryCollect {
		// Collected before another reader may take it: the next
		// reader's memory is then what this one gave back rather than
		// the process growing by it first, as the collector's pace
		// would have it.
		runtime.GC()
	}
	h.m.mu.Lock()
	h.m.used -= h.held
	h.held = 0
	close(h.m.freed)
	h.m.freed = make(chan struct{})
	h.m.mu.Unlock()
}
