package rbac

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk"
)

// TestSignInTimingAlike: a wrong password cost two Argon2id hashes and an
// unknown name or a user without a password one, so times told which users
// have a password (55-66 ms against 30-35 ms). Now every attempt costs
// exactly one hash with the same parameters; the times are logged.
func TestSignInTimingAlike(t *testing.T) {
	u, err := OpenUsers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ana", "nopw"} {
		if _, _, err := u.Add(n, "analyst"); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	db, _ := u.load()
	params := func(encoded string) string { return strings.Join(strings.Split(encoded, "$")[:4], "$") }
	if got, want := params(dummyHash()), params(db.Users[0].PasswordHash); got != want {
		t.Errorf("the dummy hash has parameters %s, real ones %s", got, want)
	}
	times := map[string]time.Duration{}
	for _, name := range []string{"nobody", "nopw", "ana"} {
		before := u.hashes.Load()
		start := time.Now()
		if _, err := u.CheckPassword(context.Background(), name, "wrong horse battery"); datadesk.ErrorCode(err) != datadesk.Unauthenticated {
			t.Fatalf("%s: %v", name, err)
		}
		times[name] = time.Since(start)
		if n := u.hashes.Load() - before; n != 1 {
			t.Errorf("%s: %d hashes, want exactly 1", name, n)
		}
	}
	before := u.hashes.Load()
	if _, err := u.CheckPassword(context.Background(), "ana", "correct horse battery"); err != nil || u.hashes.Load()-before != 1 {
		t.Errorf("right password: %v, %d hashes", err, u.hashes.Load()-before)
	}
	t.Logf("unknown name %v, no password %v, wrong password %v", times["nobody"], times["nopw"], times["ana"])
}

// TestPasswordHashingBounded: however many checks arrive at once, at most
// hashSlots hashes run together; the rest wait briefly, then answer
// rate_limited.
func TestPasswordHashingBounded(t *testing.T) {
	u, err := OpenUsers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.Add("ana", "analyst"); err != nil {
		t.Fatal(err)
	}
	if err := u.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	peak := 0
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			peak = max(peak, u.hashing.inUse())
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	// Enough checks that the last would wait past the wait on any
	// machine: each slot takes 20 of them, about 30 ms each.
	u.hashWait = 200 * time.Millisecond
	codes := make([]datadesk.Code, 20*hashSlots())
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := u.CheckPassword(context.Background(), "ana", "wrong horse battery")
			codes[i] = datadesk.ErrorCode(err)
		}()
	}
	wg.Wait()
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	if peak > hashSlots() {
		t.Errorf("%d hashes ran at once, want at most %d", peak, hashSlots())
	}
	for _, c := range codes {
		if c != datadesk.Unauthenticated && c != datadesk.RateLimited {
			t.Errorf("code %s, want unauthenticated or rate_limited", c)
		}
	}
	if !slices.Contains(codes, datadesk.RateLimited) {
		t.Errorf("%d checks at once: none was turned away", len(codes))
	}
}
