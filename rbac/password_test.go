package rbac

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"datadesk"
)

// TestSignInTimingAlike: an unknown name, a user without a password and a
// wrong password each cost one Argon2id hash, so their times cannot tell
// which users have a password (each of the last took two hashes before).
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
	median := func(name string) time.Duration {
		var ds []time.Duration
		for range 7 {
			start := time.Now()
			if _, err := u.CheckPassword(context.Background(), name, "wrong horse battery"); datadesk.ErrorCode(err) != datadesk.Unauthenticated {
				t.Fatalf("%s: %v", name, err)
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	median("nobody") // warm up: the dummy hash is made once
	times := map[string]time.Duration{}
	for _, name := range []string{"nobody", "nopw", "ana"} {
		times[name] = median(name)
	}
	lo, hi := times["nobody"], times["nobody"]
	for _, d := range times {
		lo, hi = min(lo, d), max(hi, d)
	}
	if float64(hi) > 1.4*float64(lo) {
		t.Errorf("sign-in times differ: %v; want within 40%% of each other", times)
	}
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
			peak = max(peak, len(u.hashing))
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	codes := make([]datadesk.Code, 60)
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
		t.Errorf("60 checks at once: none was turned away (%v)", codes)
	}
}
