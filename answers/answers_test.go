package answers

import (
	"fmt"
	"testing"
)

func TestBoundHolds(t *testing.T) {
	t.Parallel()
	const max = 64 << 10
	c := New(max)
	raw := make([]byte, 1000)
	for i := range 1000 {
		k := Key{Owner: "u1", Tool: "files.query_table", Args: fmt.Sprintf(`{"n":%d}`, i), Version: 1}
		c.Put(k, raw)
		if s := c.Stats(); s.Bytes > max {
			t.Fatalf("after %d answers the cache holds %d bytes, want at most %d", i+1, s.Bytes, max)
		}
	}
	s := c.Stats()
	if s.Evictions == 0 {
		t.Fatalf("got no evictions after 1000 answers of 1000 bytes in %d bytes", max)
	}
	if _, ok := c.Get(Key{Owner: "u1", Tool: "files.query_table", Args: `{"n":0}`, Version: 1}); ok {
		t.Fatal("the least recently used answer is still kept")
	}
	if _, ok := c.Get(Key{Owner: "u1", Tool: "files.query_table", Args: `{"n":999}`, Version: 1}); !ok {
		t.Fatal("the last answer is not kept")
	}
}

func TestKeyParts(t *testing.T) {
	t.Parallel()
	c := New(1 << 20)
	k := Key{Owner: "u1", Tool: "files.query_table", Args: `{}`, Version: 1}
	c.Put(k, []byte(`{"a":1}`))
	for _, other := range []Key{
		{Owner: "u2", Tool: k.Tool, Args: k.Args, Version: k.Version},
		{Owner: k.Owner, Tool: "files.analyze_table", Args: k.Args, Version: k.Version},
		{Owner: k.Owner, Tool: k.Tool, Args: `{"x":1}`, Version: k.Version},
		{Owner: k.Owner, Tool: k.Tool, Args: k.Args, Version: 2},
	} {
		if _, ok := c.Get(other); ok {
			t.Errorf("got a hit for %+v, want a miss", other)
		}
	}
	if _, ok := c.Get(k); !ok {
		t.Fatal("got a miss for the key kept")
	}
	if s := c.Stats(); s.Hits != 1 || s.Misses != 4 {
		t.Fatalf("got %d hits and %d misses, want 1 and 4", s.Hits, s.Misses)
	}
}

func TestNilAndHuge(t *testing.T) {
	t.Parallel()
	var none *Cache = New(0)
	none.Put(Key{}, []byte("x"))
	if _, ok := none.Get(Key{}); ok {
		t.Fatal("a disabled cache answered")
	}
	c := New(4096)
	c.Put(Key{Owner: "u"}, make([]byte, 2048))
	if s := c.Stats(); s.Entries != 0 {
		t.Fatalf("an answer of half the cache was kept: %d entries", s.Entries)
	}
}
