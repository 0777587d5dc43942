package api

import (
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Sign-in limits. Failed attempts are counted per user name and per client
// address; past the free ones, each failure locks that name or address for
// a delay that doubles, up to signInMaxDelay. A lock refuses even the right
// password, so guessing cannot outrun it.
const (
	signInFreeFailures = 5
	signInBaseDelay    = time.Second
	signInMaxDelay     = 15 * time.Minute
	// signInForget drops a name's or address's count after this long
	// without a failure.
	signInForget = time.Hour
	// signInMaxEntries bounds the counters kept, so a flood from many
	// addresses cannot grow memory without end.
	signInMaxEntries = 100_000
)

// attemptLimiter counts failures by key and says how long a key is locked.
type attemptLimiter struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*attempts
}

type attempts struct {
	failures int
	last     time.Time
	until    time.Time
}

func newAttemptLimiter(now func() time.Time) *attemptLimiter {
	return &attemptLimiter{now: now, entries: map[string]*attempts{}}
}

// signInKeys are the counters one attempt touches: its name (compared as
// a user would type it) and its client address; an IPv6 address counts by
// its /64, which one host can hold whole.
func signInKeys(name, addr string) []string {
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() && !ip.Is4In6() {
		if p, err := ip.Prefix(64); err == nil {
			addr = p.String()
		}
	}
	return []string{"name:" + strings.ToLower(strings.TrimSpace(name)), "addr:" + addr}
}

// locked returns how long the longest lock on keys still lasts; zero when
// none is locked.
func (l *attemptLimiter) locked(keys ...string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	for _, k := range keys {
		if a, ok := l.entries[k]; ok && a.until.After(now) {
			wait = max(wait, a.until.Sub(now))
		}
	}
	return wait
}

// fail counts a failed attempt on each key and locks the keys past their
// free failures, for a delay that doubles with each further failure.
func (l *attemptLimiter) fail(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		a, ok := l.entries[k]
		if ok && now.Sub(a.last) > signInForget {
			*a = attempts{}
		}
		if !ok {
			if len(l.entries) >= signInMaxEntries {
				l.prune(now)
			}
			if len(l.entries) >= signInMaxEntries {
				continue
			}
			a = &attempts{}
			l.entries[k] = a
		}
		a.failures++
		a.last = now
		if n := a.failures - signInFreeFailures; n > 0 {
			delay := signInMaxDelay
			if n < 20 {
				delay = min(signInBaseDelay<<(n-1), signInMaxDelay)
			}
			a.until = now.Add(delay)
		}
	}
}

// succeed forgets the failures of a name once its password was right; an
// address keeps its count, so one good account does not reset guessing.
func (l *attemptLimiter) succeed(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.entries, key)
}

// prune drops, when the counters are full, those that lock nothing now.
func (l *attemptLimiter) prune(now time.Time) {
	for k, a := range l.entries {
		if now.Sub(a.last) > signInForget || !a.until.After(now) {
			delete(l.entries, k)
		}
	}
}
