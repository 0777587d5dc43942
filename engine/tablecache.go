package engine

import (
	"container/list"
	"slices"
	"sync"
	"sync/atomic"

	"datadesk/engine/catalog"
)

// tableCache holds one owner's catalog entries by table id and by file id
// (its first sheet), and its files with their sheets. A stored table never
// changes, nor does a file's list of sheets once it is stored; deleting or
// moving one clears the cache.
type tableCache struct {
	mu     sync.RWMutex
	tables map[string]*catalog.Table
	files  map[string]*catalog.File
	// unique holds the lookup keys (a table id and its key columns) found
	// not to repeat.
	unique map[string]bool
	// full holds the tables found stored in full row groups.
	full map[string]bool
	// version is the owner's data version (Store.Version), taken from
	// clock, which only grows: a cache made again after its owner's was
	// dropped never repeats a version an answer was kept under.
	version atomic.Uint64
	clock   *atomic.Uint64
}

// bump gives the owner's data a new version.
func (c *tableCache) bump() { c.version.Store(c.clock.Add(1)) }

func (c *tableCache) isFull(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.full[id]
}

func (c *tableCache) setFull(id string) {
	c.mu.Lock()
	if c.full == nil {
		c.full = map[string]bool{}
	}
	c.full[id] = true
	c.mu.Unlock()
}

func (c *tableCache) isUnique(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.unique[key]
}

func (c *tableCache) setUnique(key string) {
	c.mu.Lock()
	if c.unique == nil {
		c.unique = map[string]bool{}
	}
	c.unique[key] = true
	c.mu.Unlock()
}

func (c *tableCache) get(id string) (*catalog.Table, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[id]
	return t, ok
}

func (c *tableCache) put(id string, t *catalog.Table) {
	c.mu.Lock()
	c.tables[id] = t
	c.mu.Unlock()
}

// getFile returns a copy of the file kept under id, which its caller may
// change.
func (c *tableCache) getFile(id string) (*catalog.File, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.files[id]
	if !ok {
		return nil, false
	}
	cp := *f
	cp.Tables = slices.Clone(f.Tables)
	return &cp, true
}

// putFile keeps a copy of f, read at version: a file read before a write
// that may have changed it is not kept once the write has ended.
func (c *tableCache) putFile(f *catalog.File, version uint64) {
	cp := *f
	cp.Tables = slices.Clone(f.Tables)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version.Load() != version {
		return
	}
	if c.files == nil {
		c.files = map[string]*catalog.File{}
	}
	c.files[f.ID] = &cp
}

func (c *tableCache) clear() {
	c.mu.Lock()
	clear(c.tables)
	clear(c.files)
	clear(c.unique)
	c.mu.Unlock()
}

// tableCaches keeps owners' table caches across the closing and reopening
// of their databases, so that an owner's first call after being closed for
// room does not read the catalog again: only this process changes an
// owner's catalog while it holds the data directory. The least recently
// used are dropped past max.
type tableCaches struct {
	mu     sync.Mutex
	max    int
	owners map[string]*list.Element // of *ownerCache
	lru    *list.List
	// clock numbers the owners' data versions, node-wide.
	clock atomic.Uint64
}

type ownerCache struct {
	owner string
	cache *tableCache
}

func newTableCaches(max int) *tableCaches {
	return &tableCaches{max: max, owners: map[string]*list.Element{}, lru: list.New()}
}

// of returns owner's cache, made empty if there was none.
func (c *tableCaches) of(owner string) *tableCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.owners[owner]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*ownerCache).cache
	}
	oc := &ownerCache{owner: owner, cache: &tableCache{tables: map[string]*catalog.Table{}, clock: &c.clock}}
	oc.cache.bump()
	c.owners[owner] = c.lru.PushFront(oc)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.owners, last.Value.(*ownerCache).owner)
	}
	return oc.cache
}

// drop forgets owner's cache.
func (c *tableCaches) drop(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.owners[owner]; ok {
		c.lru.Remove(el)
		delete(c.owners, owner)
	}
}
