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
//
// Every attempt, right or wrong, also spends one of its name and
// address's turns (signInPairBurst at once, then one each
// signInPairEvery) and one of its address's (signInAddrBurst, then one
// each signInAddrEvery), and is checked one at a time per name and
// address and signInChecksPerAddr at a time per address: a flood of
// sign-ins, right passwords included, is refused at its own limits, at
// once and without hashing, and never takes the server's few hashing
// slots from other users, at its address or elsewhere.
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

	signInPairBurst = 5
	signInPairEvery = 12 * time.Second
	signInAddrBurst = 30
	signInAddrEvery = 2 * time.Second
)

// attemptLimiter counts failed sign-ins and decides which attempts may go
// on.
type attemptLimiter struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*attempts
	// checking counts each name and address's passwords being checked
	// now.
	checking map[string]int
	// rates holds, for each name and address and each address, when its
	// turns are all back (a token bucket kept as one time).
	rates map[string]time.Time
	// entriesPruned and ratesPruned are when entries and rates were last
	// pruned: at most once a second, when full.
	entriesPruned, ratesPruned time.Time
}

type attempts struct {
	failures int
	last     time.Time
	// until is when a lock ends; for a name, when the next attempt from
	// an address that failed before may go on.
	until time.Time
}

func newAttemptLimiter(now func() time.Time) *attemptLimiter {
	return &attemptLimiter{now: now, entries: map[string]*attempts{}, checking: map[string]int{}, rates: map[string]time.Time{}}
}

// Checks at once: one per name and address, signInChecksPerAddr per
// address (waiting up to signInTurnWait for a turn), signInsChecking on
// the node. The server hashes few at a time, and one address's sign-ins
// sent by the hundred must not keep another's from its turn.
const (
	signInChecksPerAddr = 2
	signInsChecking     = 64
	signInTurnWait      = time.Second
)

// begin takes the name and address's checking slot, or reports that it is
// taken; end gives it back.
func (l *attemptLimiter) begin(k signInAttempt) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.checking[k.pair] > 0 {
		return false
	}
	l.checking[k.pair]++
	return true
}

func (l *attemptLimiter) end(k signInAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.checking, k.pair)
}

// spend takes one of the name and address's turns and one of the
// address's, or, when either has none left, takes neither and says how
// long until both have one.
func (l *attemptLimiter) spend(k signInAttempt) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	buckets := [...]struct {
		key   string
		burst int
		every time.Duration
	}{{k.pair, signInPairBurst, signInPairEvery}, {k.addr, signInAddrBurst, signInAddrEvery}}
	var wait time.Duration
	for _, b := range buckets {
		full := l.rates[b.key]
		if full.Before(now) {
			full = now
		}
		wait = max(wait, full.Sub(now)-time.Duration(b.burst-1)*b.every)
	}
	if wait > 0 {
		return wait
	}
	// Full, the turns all back are forgotten, at most once a second: a
	// flood from as many addresses must not make each sign-in read them
	// all. Until then a new address's turns are not counted.
	if len(l.rates) >= signInMaxEntries && now.Sub(l.ratesPruned) >= time.Second {
		l.ratesPruned = now
		for key, full := range l.rates {
			if !full.After(now) {
				delete(l.rates, key)
			}
		}
	}
	for _, b := range buckets {
		full := l.rates[b.key]
		if full.Before(now) {
			full = now
		}
		if _, ok := l.rates[b.key]; ok || len(l.rates) < signInMaxEntries {
			l.rates[b.key] = full.Add(b.every)
		}
	}
	return 0
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
			if len(l.entries) >= signInMaxEntries && now.Sub(l.entriesPruned) >= time.Second {
				l.entriesPruned = now
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
