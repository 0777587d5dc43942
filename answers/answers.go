// Package answers keeps the answers of read-only tool calls in memory, so
// that the same call on unchanged data answers without running again: a
// chat assistant retrying, asking the same question in a follow-up, or
// several of an owner's sessions asking alike. An entry is keyed by the
// owner, the tool, the call's arguments in canonical form and the owner's
// data version, which every write changes: a write makes the owner's
// entries unreachable at once, and the least recently used go when the
// bytes would pass the bound. The cache decides nothing: the caller asks
// the policy before looking here.
package answers

import (
	"container/list"
	"sync"
)

// entryOverhead is what an entry costs beside its key's and answer's
// bytes: the list element, the map slot and the entry's own fields.
const entryOverhead = 256

// maxShare bounds one answer against the whole cache: one large answer
// does not push out every other.
const maxShare = 4

// Key names one call's answer.
type Key struct {
	// Owner is the owner whose data the call reads.
	Owner string
	// Tool is the tool's registered name.
	Tool string
	// Args are the call's arguments in canonical form (JSON, keys sorted).
	Args string
	// Version is the owner's data version when the call was taken.
	Version uint64
}

func (k Key) size() int64 { return int64(len(k.Owner)+len(k.Tool)+len(k.Args)) + entryOverhead }

type entry struct {
	key  Key
	raw  []byte
	size int64
}

// Stats are a cache's counts since it was made and its size now.
type Stats struct {
	Hits, Misses, Evictions uint64
	Entries                 int
	Bytes, MaxBytes         int64
}

// Cache is an LRU of answers bounded by bytes; a nil *Cache keeps nothing.
// It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	lru   *list.List // of *entry, the most recently used first
	items map[Key]*list.Element
	stats Stats
}

// New returns a cache holding at most maxBytes of answers and keys, or nil
// (no cache) when maxBytes is not positive.
func New(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		return nil
	}
	return &Cache{max: maxBytes, lru: list.New(), items: map[Key]*list.Element{}}
}

// Get returns the answer kept under k. The bytes are shared: the caller
// must not change them.
func (c *Cache) Get(k Key) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		c.stats.Misses++
		return nil, false
	}
	c.stats.Hits++
	c.lru.MoveToFront(el)
	return el.Value.(*entry).raw, true
}

// Put keeps raw under k, dropping the least recently used answers until
// it fits; an answer bigger than a quarter of the cache is not kept. The
// cache keeps raw itself: the caller must not change it afterwards.
func (c *Cache) Put(k Key, raw []byte) {
	if c == nil {
		return
	}
	size := k.size() + int64(len(raw))
	if size > c.max/maxShare {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.remove(el)
	}
	for c.used+size > c.max {
		c.remove(c.lru.Back())
		c.stats.Evictions++
	}
	c.items[k] = c.lru.PushFront(&entry{key: k, raw: raw, size: size})
	c.used += size
}

func (c *Cache) remove(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.items, e.key)
	c.used -= e.size
}

// Clear drops every answer; the counts stay.
func (c *Cache) Clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	clear(c.items)
	c.used = 0
}

// Stats returns the cache's counts and size; zero for a nil cache.
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries, s.Bytes, s.MaxBytes = c.lru.Len(), c.used, c.max
	return s
}
