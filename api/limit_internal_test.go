package api

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestSignInLockGrows: five failures of a name from an address are free,
// then each locks that name from that address for twice as long; an
// address is locked past its own free failures, whatever the names; a
// name's failures lock no other address.
func TestSignInLockGrows(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l := newAttemptLimiter(clock)
	keys := signInKeys("Ana", "10.0.0.1")
	for range signInFreeFailures {
		if w, _ := l.admit(keys); w != 0 {
			t.Fatalf("locked %v within the free failures", w)
		}
		l.fail(keys)
	}
	var waits []time.Duration
	for range 4 {
		l.fail(keys)
		w, _ := l.admit(keys)
		waits = append(waits, w)
	}
	if want := []time.Duration{signInBaseDelay, 2 * signInBaseDelay, 4 * signInBaseDelay, 8 * signInBaseDelay}; fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("locks %v, want %v", waits, want)
	}
	if w, suspect := l.admit(signInKeys(" ANA ", "10.0.0.2")); w != 0 || suspect {
		t.Errorf("the same name from an address that never failed: wait %v, suspect %v", w, suspect)
	}
	if w, _ := l.admit(signInKeys("bob", "10.0.0.1")); w != 0 {
		t.Errorf("another name from the same address is locked before the address's free failures")
	}
	for i := range signInFreeAddrFailures + 1 {
		l.fail(signInKeys(fmt.Sprintf("user%d", i), "10.0.0.9"))
	}
	if w, _ := l.admit(signInKeys("carol", "10.0.0.9")); w == 0 {
		t.Errorf("an address past its free failures is not locked")
	}
	// An IPv6 host's /64 is one address.
	for i := range signInFreeAddrFailures + 1 {
		l.fail(signInKeys(fmt.Sprintf("user%d", i), fmt.Sprintf("2001:db8:1:2::%x", i+1)))
	}
	if w, _ := l.admit(signInKeys("carol", "2001:db8:1:2:ffff::1")); w == 0 {
		t.Errorf("failures across one /64 do not lock it")
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if w, _ := l.admit(keys); w != 0 {
		t.Errorf("still locked after the delay: %v", w)
	}
	for range 100 {
		l.fail(keys)
	}
	if w, _ := l.admit(keys); w != signInMaxDelay {
		t.Errorf("lock after many failures %v, want the cap %v", w, signInMaxDelay)
	}
}

// TestSignInTurnsAtTheirLimits: each sign-in bound at its largest value. A
// name and address sign in signInPairBurst times at once, then once each
// signInPairEvery; an address signInAddrBurst times (any names), then once
// each signInAddrEvery; and the counts kept stay within signInMaxEntries
// addresses, in bounded time and memory, however many addresses come.
func TestSignInTurnsAtTheirLimits(t *testing.T) {
	// Not parallel: it measures the process's memory, which other tests would add to.
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	l := newAttemptLimiter(func() time.Time { return now })
	for i := range signInPairBurst {
		if w := l.spend(signInKeys("ana", "10.0.0.1")); w != 0 {
			t.Fatalf("sign-in %d of a name and address refused for %v", i+1, w)
		}
	}
	if w := l.spend(signInKeys("ana", "10.0.0.1")); w != signInPairEvery {
		t.Errorf("one past the name and address's turns: wait %v, want %v", w, signInPairEvery)
	}
	now = now.Add(signInPairEvery)
	if w := l.spend(signInKeys("ana", "10.0.0.1")); w != 0 {
		t.Errorf("a turn back after %v: wait %v", signInPairEvery, w)
	}
	for i := range signInAddrBurst {
		if w := l.spend(signInKeys(fmt.Sprintf("user%d", i), "10.0.0.3")); w != 0 {
			t.Fatalf("sign-in %d of the address refused for %v", i+1, w)
		}
	}
	if w := l.spend(signInKeys("bob", "10.0.0.3")); w != signInAddrEvery {
		t.Errorf("one past the address's turns: wait %v, want %v", w, signInAddrEvery)
	}
	if w := l.spend(signInKeys("bob", "10.0.0.2")); w != 0 {
		t.Errorf("another address: wait %v", w)
	}

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap := ms.HeapAlloc
	start := time.Now()
	for i := range signInMaxEntries {
		l.spend(signInKeys("x", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)))
	}
	took := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("%d addresses' turns: %v, %d MiB held, %d counts", signInMaxEntries, took, (int64(ms.HeapAlloc)-int64(heap))>>20, len(l.rates))
	if len(l.rates) > signInMaxEntries || took > 2*time.Second || int64(ms.HeapAlloc)-int64(heap) > 64<<20 {
		t.Errorf("%d addresses: %d counts kept in %v", signInMaxEntries, len(l.rates), took)
	}
}
