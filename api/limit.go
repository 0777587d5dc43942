package api

import (
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Sign-in limits. Failures are counted per client address, per name and
// address together, and per name, and each count does one thing:
//
//   - An address past its free failures (any names) is locked for a delay
//     that doubles with each further failure, up to signInMaxDelay: every
//     attempt from it is refused, the right password too.
//   - A name and address together past their free failures are locked the
//     same way: guessing one name from one address cannot outrun it.
//   - A name's own failures never lock it. Past signInNameAttack failures
//     the name is under attack, and attempts for it from addresses that
//     have failed before (for any name) are paced: one at a time per
//     pace, which doubles with the name's failures up to signInMaxPace.
//     An address that has never failed is never refused on the name's
//     account, and its password is hashed before those of addresses that
//     have failed.
//
// So no one can lock a user out by failing as them from elsewhere, and
// guessing a name from many addresses slows to the pace once each has
// failed.
const (
	signInFreeFailures     = 5
	signInFreeAddrFailures = 20
	signInBaseDelay        = time.Second
	signInMaxDelay         = 15 * time.Minute
	signInNameAttack       = 10
	signInMaxPace          = time.Minute
	// signInForget drops a count after this long without a failure.
	signInForget = time.Hour
	// signInMaxEntries bounds the counts kept, so a flood from many
	// addresses cannot grow memory without end.
	signInMaxEntries = 100_000
)

// attemptLimiter counts failed sign-ins and decides which attempts may go
// on.
type attemptLimiter struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*attempts
	// checking counts each address's passwords being checked now.
	checking map[string]int
}

type attempts struct {
	failures int
	last     time.Time
	// until is when a lock ends; for a name, when the next attempt from
	// an address that failed before may go on.
	until time.Time
}

func newAttemptLimiter(now func() time.Time) *attemptLimiter {
	return &attemptLimiter{now: now, entries: map[string]*attempts{}, checking: map[string]int{}}
}

// signInChecksPerAddr is how many of one address's passwords are checked
// at once: the server hashes few at a time, and an address's right
// passwords sent by the hundred must not keep another's from its turn.
const signInChecksPerAddr = 1

// begin takes one of the address's checking slots, or reports that they
// are all taken; end gives it back.
func (l *attemptLimiter) begin(k signInAttempt) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.checking[k.addr] >= signInChecksPerAddr {
		return false
	}
	l.checking[k.addr]++
	return true
}

func (l *attemptLimiter) end(k signInAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.checking[k.addr]--; l.checking[k.addr] <= 0 {
		delete(l.checking, k.addr)
	}
}

// signInAttempt is one sign-in's counts: its client address, name and
// address together, and name.
type signInAttempt struct {
	addr, pair, name string
}

// signInKeys are the counts one attempt touches. A name is compared as a
// user would type it (NFKC, case and surrounding spaces of any kind
// ignored); an IPv6 address counts by its /64, which one host can hold
// whole.
func signInKeys(name, addr string) signInAttempt {
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() && !ip.Is4In6() {
		if p, err := ip.Prefix(64); err == nil {
			addr = p.String()
		}
	}
	n := strings.ToLower(strings.TrimFunc(norm.NFKC.String(name), unicode.IsSpace))
	return signInAttempt{addr: "addr:" + addr, pair: "pair:" + n + "\x00" + addr, name: "name:" + n}
}

// admit says whether an attempt may go on now: zero, or how long until it
// may. suspect reports that its address has failed before, so its
// password waits behind others'. An attempt admitted for a name under
// attack takes the name's pace slot.
func (l *attemptLimiter) admit(k signInAttempt) (wait time.Duration, suspect bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, key := range []string{k.addr, k.pair} {
		if a := l.live(key, now); a != nil && a.until.After(now) {
			wait = max(wait, a.until.Sub(now))
		}
	}
	if wait > 0 {
		return wait, true
	}
	addr := l.live(k.addr, now)
	if addr == nil || addr.failures == 0 {
		return 0, false
	}
	if name := l.live(k.name, now); name != nil && name.failures >= signInNameAttack {
		if name.until.After(now) {
			return name.until.Sub(now), true
		}
		name.until = now.Add(doubling(name.failures-signInNameAttack, signInMaxPace))
	}
	return 0, true
}

// live returns key's count, dropping it if it was forgotten.
func (l *attemptLimiter) live(key string, now time.Time) *attempts {
	a, ok := l.entries[key]
	if ok && now.Sub(a.last) > signInForget {
		delete(l.entries, key)
		return nil
	}
	return a
}

// fail counts a failed attempt, and locks its address and its name and
// address past their free failures.
func (l *attemptLimiter) fail(k signInAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, key := range []string{k.addr, k.pair, k.name} {
		a := l.live(key, now)
		if a == nil {
			if len(l.entries) >= signInMaxEntries {
				l.prune(now)
			}
			if len(l.entries) >= signInMaxEntries {
				continue
			}
			a = &attempts{}
			l.entries[key] = a
		}
		a.failures++
		a.last = now
		free := signInFreeFailures
		switch key {
		case k.name:
			continue
		case k.addr:
			free = signInFreeAddrFailures
		}
		if n := a.failures - free; n > 0 {
			a.until = now.Add(doubling(n-1, signInMaxDelay))
		}
	}
}

// doubling is signInBaseDelay doubled n times, at most limit.
func doubling(n int, limit time.Duration) time.Duration {
	if n >= 20 {
		return limit
	}
	return min(signInBaseDelay<<max(n, 0), limit)
}

// succeed forgets the failures of a name and address once the password
// was right; the address keeps its count, so one good account does not
// reset guessing from it, and the name its, so an attack goes on being
// paced.
func (l *attemptLimiter) succeed(k signInAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.entries, k.pair)
}

// prune drops, when the counts are full, those that lock nothing now.
func (l *attemptLimiter) prune(now time.Time) {
	for k, a := range l.entries {
		if now.Sub(a.last) > signInForget || !a.until.After(now) {
			delete(l.entries, k)
		}
	}
}
