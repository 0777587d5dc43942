// Package engine keeps each owner's catalog and tables in that owner's own
// DuckDB database, and is the only package that speaks SQL.
//
// An Engine opens owner databases on demand and keeps at most Config.MaxOpen of
// them open, closing the least recently used idle one when it needs room. Each
// database file has at most one open instance in the process. Every instance is
// hardened when it opens: no file system access from SQL, no extension loading,
// bounded memory, threads and temp space, and the configuration locked.
package engine

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"datadesk"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxOpen     = 32
	DefaultMemoryLimit = "1GB"
	DefaultThreads     = 2
	DefaultMaxTempSize = "8GB"
)

// Config configures an Engine.
type Config struct {
	// Dir is the data directory; owners live under Dir/owners/<owner id>/.
	Dir string
	// MaxOpen caps the number of owner databases open at once.
	MaxOpen int
	// MemoryLimit, Threads and MaxTempSize bound each DuckDB instance.
	MemoryLimit string
	Threads     int
	MaxTempSize string
	Logger      *slog.Logger
	// Remote, if set, can hold big tables outside the owners' DuckDB
	// files (a ClickHouse cluster); RemoteMinRows > 0 sends every new
	// table of at least that many rows there.
	Remote        Backend
	RemoteMinRows int64
}

func (c *Config) setDefaults() {
	if c.MaxOpen <= 0 {
		c.MaxOpen = DefaultMaxOpen
	}
	if c.MemoryLimit == "" {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.Threads <= 0 {
		c.Threads = DefaultThreads
	}
	if c.MaxTempSize == "" {
		c.MaxTempSize = DefaultMaxTempSize
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Engine hands out owner stores.
type Engine struct {
	cfg Config

	mu     sync.Mutex
	open   map[string]*slot
	lru    *list.List // of *slot, most recently used at the front
	closed bool
}

type slot struct {
	owner string
	store *Store
	err   error
	ready chan struct{}
	refs  int
	elem  *list.Element
}

// New returns an Engine over cfg.Dir, creating the directory if needed.
func New(cfg Config) (*Engine, error) {
	cfg.setDefaults()
	if cfg.Dir == "" {
		return nil, fmt.Errorf("engine: no data directory")
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "owners"), 0o700); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &Engine{cfg: cfg, open: map[string]*slot{}, lru: list.New()}, nil
}

// Acquire returns the store of owner, opening it if needed, and a release
// function the caller must call when done with it. A store is never closed
// while acquired.
func (e *Engine) Acquire(ctx context.Context, owner string) (*Store, func(), error) {
	if !datadesk.ValidID(owner) {
		return nil, nil, datadesk.Errorf(datadesk.Invalid, "invalid owner id")
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, nil, fmt.Errorf("engine: closed")
	}
	s, ok := e.open[owner]
	if !ok {
		s = &slot{owner: owner, ready: make(chan struct{})}
		e.open[owner] = s
		s.elem = e.lru.PushFront(s)
		s.refs++
		e.mu.Unlock()
		s.store, s.err = openStore(ctx, e.cfg, owner)
		close(s.ready)
		if s.err != nil {
			e.mu.Lock()
			delete(e.open, owner)
			e.lru.Remove(s.elem)
			e.mu.Unlock()
			return nil, nil, s.err
		}
		e.evict()
		return s.store, e.releaser(s), nil
	}
	s.refs++
	e.lru.MoveToFront(s.elem)
	e.mu.Unlock()
	<-s.ready
	if s.err != nil {
		return nil, nil, s.err
	}
	return s.store, e.releaser(s), nil
}

func (e *Engine) releaser(s *slot) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			s.refs--
			e.mu.Unlock()
			e.evict()
		})
	}
}

// evict closes least recently used idle stores while more than MaxOpen are
// open. Stores in use stay open even past the cap.
func (e *Engine) evict() {
	var victims []*slot
	e.mu.Lock()
	for el := e.lru.Back(); el != nil && len(e.open) > e.cfg.MaxOpen; {
		prev := el.Prev()
		s := el.Value.(*slot)
		if s.refs == 0 && s.store != nil {
			delete(e.open, s.owner)
			e.lru.Remove(el)
			victims = append(victims, s)
		}
		el = prev
	}
	e.mu.Unlock()
	for _, s := range victims {
		if err := s.store.close(); err != nil {
			e.cfg.Logger.Error("close owner store", "owner", s.owner, "err", err)
		}
	}
}

// OpenCount returns how many owner databases are open.
func (e *Engine) OpenCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.open)
}

// Close closes every open store. Stores still acquired are closed too; the
// caller must have stopped using them.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	slots := make([]*slot, 0, len(e.open))
	for _, s := range e.open {
		slots = append(slots, s)
	}
	e.open = map[string]*slot{}
	e.lru.Init()
	e.mu.Unlock()
	var first error
	for _, s := range slots {
		<-s.ready
		if s.store != nil {
			if err := s.store.close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// OwnerDir returns the directory that holds owner's database and files.
func (e *Engine) OwnerDir(owner string) string {
	return filepath.Join(e.cfg.Dir, "owners", owner)
}
