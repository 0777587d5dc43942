// Package engine is the DuckDB store: each owner's catalog and tables in
// that owner's own DuckDB database, the load paths that type an upload as
// it is stored (DuckDB's own reader with its types proved as it reads, or
// text staged and classified in SQL), and the DuckDB dialect of the query
// plan. Tables a configured catalog.Backend holds (the ClickHouse cluster)
// are reached through that interface only.
//
// An Engine runs one DuckDB instance for the whole process (hub.go) and
// attaches an owner's database file to it on demand; at most Config.MaxOpen
// stay attached, the least recently used idle ones detached in the
// background. Memory, threads and temp space are bounded once for the
// whole node, however many owners are open. The instance is hardened when
// it opens: SQL reaches no file outside the owners' folder, no extension
// loads, and the configuration is locked.
package engine

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxOpen     = 1024
	DefaultMemoryLimit = "1GB"
	DefaultThreads     = 2
	DefaultMaxTempSize = "8GB"
	// DefaultMaxOwnerBytes bounds one owner's storage: 10 GiB.
	DefaultMaxOwnerBytes = 10 << 30
)

// minTableCaches is the fewest owners whose catalog entries are kept while
// their databases are closed.
const minTableCaches = 4096

// Config configures an Engine.
type Config struct {
	// Dir is the data directory; owners live under Dir/owners/<owner id>/.
	Dir string
	// MaxOpen caps the number of owner databases attached while idle;
	// databases in use stay attached past it. An attached database costs
	// two file handles at most and some of MemoryLimit, which DuckDB
	// evicts as it needs; New lowers MaxOpen to a quarter of the
	// process's open-file limit.
	MaxOpen int
	// MemoryLimit, Threads and MaxTempSize bound the engine's one DuckDB
	// instance: every owner's queries and loads together. Sizes are in
	// DuckDB's units (1GB, 512MiB).
	MemoryLimit string
	Threads     int
	MaxTempSize string
	// HeldBeside is memory the server keeps outside DuckDB that counts
	// against MemoryLimit (the answers' cache): DuckDB's pool is smaller
	// by as much.
	HeldBeside int64
	Logger     *slog.Logger
	// Remote, if set, can hold big tables outside the owners' DuckDB
	// files (a ClickHouse cluster); RemoteMinRows > 0 sends every new
	// table of at least that many rows there.
	Remote        catalog.Backend
	RemoteMinRows int64
	// RetireAfter is how long a moved table's old copy stays for readers
	// that found it before the move; 0 means a minute.
	RetireAfter time.Duration
	// MaxOwnerBytes bounds what one owner stores: its files' bytes, each
	// file counted whole, and its database. 0 means
	// DefaultMaxOwnerBytes.
	MaxOwnerBytes int64
}

func (c *Config) setDefaults() {
	if c.MaxOpen <= 0 {
		c.MaxOpen = DefaultMaxOpen
	}
	if c.MaxOwnerBytes <= 0 {
		c.MaxOwnerBytes = DefaultMaxOwnerBytes
	}
	if c.RetireAfter <= 0 {
		c.RetireAfter = time.Minute
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
	cfg  Config
	hub  *hub
	lock *os.File
	// maxWidth is the widest table the engine loads (MaxWidth).
	maxWidth int

	mu   sync.Mutex
	open map[string]*slot
	// lru holds the slots that are not closing, most recently used at
	// the front.
	lru *list.List
	// ready holds the owners whose catalog was created and whose
	// leftovers of a crash were removed since the process started.
	ready  map[string]bool
	caches *tableCaches
	closed bool
	// withheld holds the owners taken out of service for a move to
	// another node (Withhold).
	withheld map[string]bool

	// compacting holds the owners whose tables a rewriter is going
	// through (compactLater), true once it is asked to go through them
	// again.
	compacting map[string]bool

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// slot is an owner's place among the open stores.
type slot struct {
	owner string
	store *Store
	err   error
	// opened is closed once store or err is set.
	opened chan struct{}
	refs   int
	elem   *list.Element
	// gone is set when the store is being closed, and closed once it is;
	// acquirers wait for it, then open the store again.
	gone chan struct{}
	// idle is set while a closer waits for the last holder to release.
	idle chan struct{}
}

// New returns an Engine over cfg.Dir, creating the directory if needed. It
// fails with a conflict if another Engine, in this process or another,
// has the directory.
func New(cfg Config) (*Engine, error) {
	cfg.setDefaults()
	if cfg.Dir == "" {
		return nil, fmt.Errorf("engine: no data directory")
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "owners"), 0o700); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if files := openFileLimit(); files > 0 && cfg.MaxOpen > files/4 {
		cfg.Logger.Warn("fewer owner databases kept open than asked, for the open-file limit", "max_open", files/4, "open_file_limit", files)
		cfg.MaxOpen = max(files/4, 1)
	}
	lock, err := lockDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if err := sweepHandoffs(cfg.Dir); err != nil {
		lock.Close()
		return nil, err
	}
	h, err := openHub(context.Background(), cfg)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("engine: open %s: %w", cfg.Dir, err)
	}
	// The memory limit parsed when the hub was made.
	limit, _ := ParseSize("memory limit", cfg.MemoryLimit)
	e := &Engine{cfg: cfg, hub: h, lock: lock, open: map[string]*slot{}, lru: list.New(), ready: map[string]bool{}, withheld: map[string]bool{}, compacting: map[string]bool{},
		maxWidth: widthFor(poolBytes(limit, 0)),
		caches:   newTableCaches(max(4*cfg.MaxOpen, minTableCaches)),
		kick:     make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go e.evictLoop()
	return e, nil
}

// Acquire returns the store of owner, opening it if needed, and a release
// function the caller must call when done with it. A store is never closed
// while acquired.
func (e *Engine) Acquire(ctx context.Context, owner string) (*Store, func(), error) {
	if !datadesk.ValidID(owner) {
		return nil, nil, datadesk.Errorf(datadesk.Invalid, "invalid owner id")
	}
	e.mu.Lock()
	for {
		if e.closed {
			e.mu.Unlock()
			return nil, nil, fmt.Errorf("engine: closed")
		}
		if e.withheld[owner] {
			e.mu.Unlock()
			return nil, nil, errWithheld
		}
		s, ok := e.open[owner]
		if !ok {
			break
		}
		if s.gone != nil {
			gone := s.gone
			e.mu.Unlock()
			select {
			case <-gone:
			case <-ctx.Done():
				return nil, nil, classify(ctx, ctx.Err())
			}
			e.mu.Lock()
			continue
		}
		s.refs++
		e.lru.MoveToFront(s.elem)
		e.mu.Unlock()
		<-s.opened
		if s.err != nil {
			return nil, nil, s.err
		}
		return s.store, e.releaser(s), nil
	}
	s := &slot{owner: owner, opened: make(chan struct{}), refs: 1}
	s.elem = e.lru.PushFront(s)
	e.open[owner] = s
	first := !e.ready[owner]
	e.mu.Unlock()
	// Others may wait for this open: a caller that gives up must not
	// fail theirs.
	s.store, s.err = e.openStore(context.WithoutCancel(ctx), owner, first)
	e.mu.Lock()
	if s.err != nil {
		delete(e.open, owner)
		e.lru.Remove(s.elem)
	} else {
		e.ready[owner] = true
	}
	e.mu.Unlock()
	close(s.opened)
	if s.err != nil {
		return nil, nil, s.err
	}
	if first {
		e.compactLater(owner, true)
	}
	e.evictSoon()
	return s.store, e.releaser(s), nil
}

func (e *Engine) releaser(s *slot) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			s.refs--
			if s.refs == 0 && s.idle != nil {
				close(s.idle)
				s.idle = nil
			}
			e.mu.Unlock()
			e.evictSoon()
		})
	}
}

// evictSoon asks the background evictor to look for stores to close, so
// that no call waits for another owner's database to be detached.
func (e *Engine) evictSoon() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

func (e *Engine) evictLoop() {
	defer close(e.done)
	for {
		select {
		case <-e.kick:
			e.evict()
		case <-e.stop:
			return
		}
	}
}

// evict closes least recently used idle stores while more than MaxOpen
// are open. Stores in use stay open even past the cap.
func (e *Engine) evict() {
	var victims []*slot
	e.mu.Lock()
	for el := e.lru.Back(); el != nil && e.lru.Len() > e.cfg.MaxOpen; {
		prev := el.Prev()
		if s := el.Value.(*slot); s.refs == 0 && s.store != nil {
			e.lru.Remove(el)
			s.gone = make(chan struct{})
			victims = append(victims, s)
		}
		el = prev
	}
	e.mu.Unlock()
	for _, s := range victims {
		e.finish(s)
	}
}

// finish closes the store of a slot marked gone and removes the slot.
func (e *Engine) finish(s *slot) {
	if err := e.closeStore(s.store); err != nil {
		e.cfg.Logger.Error("close owner store", "owner", s.owner, "err", err)
	}
	e.mu.Lock()
	delete(e.open, s.owner)
	close(s.gone)
	e.mu.Unlock()
}

// CloseOwner closes owner's database as soon as no call holds it; calls
// that arrive meanwhile wait and then open it again. If ctx ends first,
// the database is still closed once idle, and CloseOwner returns ctx's
// error.
func (e *Engine) CloseOwner(ctx context.Context, owner string) error {
	e.mu.Lock()
	s, ok := e.open[owner]
	if !ok {
		e.mu.Unlock()
		return nil
	}
	if s.gone != nil {
		gone := s.gone
		e.mu.Unlock()
		return waitFor(ctx, gone)
	}
	e.mu.Unlock()
	<-s.opened
	e.mu.Lock()
	if e.open[owner] != s || s.gone != nil || s.store == nil {
		e.mu.Unlock()
		return e.CloseOwner(ctx, owner)
	}
	e.lru.Remove(s.elem)
	gone := make(chan struct{})
	s.gone = gone
	var idle chan struct{}
	if s.refs > 0 {
		idle = make(chan struct{})
		s.idle = idle
	}
	e.mu.Unlock()
	go func() {
		if idle != nil {
			<-idle
		}
		e.finish(s)
	}()
	return waitFor(ctx, gone)
}

func waitFor(ctx context.Context, c <-chan struct{}) error {
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sweepLater drops, once RetireAfter has passed, the old copies an
// owner's moves retired.
func (e *Engine) sweepLater(owner string) {
	time.AfterFunc(e.cfg.RetireAfter+time.Second, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, release, err := e.Acquire(ctx, owner)
		if err != nil {
			// The engine closed: the next start sweeps.
			return
		}
		defer release()
		if err := s.sweepMoves(ctx, time.Now().Add(-e.cfg.RetireAfter), false); err != nil {
			e.cfg.Logger.Error("sweep moved tables", "owner", owner, "err", err)
		}
	})
}

// MaxWidth is the widest table the engine loads: its buffer pool holds a
// DuckDB block of every column of a table being loaded.
func (e *Engine) MaxWidth() int { return e.maxWidth }

// OpenCount returns how many owner databases are open.
func (e *Engine) OpenCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.open)
}

// Close closes every open store and the engine's DuckDB instance, and
// gives up the data directory. Stores still acquired are closed too; the
// caller must have stopped using them.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	slots := make([]*slot, 0, len(e.open))
	for _, s := range e.open {
		slots = append(slots, s)
	}
	e.mu.Unlock()
	close(e.stop)
	<-e.done
	var first error
	for _, s := range slots {
		<-s.opened
		e.mu.Lock()
		gone := s.gone
		if s.idle != nil {
			// A closer waits for holders that will not release now.
			close(s.idle)
			s.idle = nil
		}
		e.mu.Unlock()
		if gone != nil {
			<-gone
			continue
		}
		if s.store != nil {
			if err := e.closeStore(s.store); err != nil && first == nil {
				first = err
			}
		}
	}
	if err := e.hub.close(); err != nil && first == nil {
		first = err
	}
	e.lock.Close()
	return first
}

// OwnerDir returns the directory that holds owner's database and files.
func (e *Engine) OwnerDir(owner string) string {
	return filepath.Join(e.cfg.Dir, "owners", owner)
}

// Dir returns the data directory, which this engine holds locked.
func (e *Engine) Dir() string { return e.cfg.Dir }
