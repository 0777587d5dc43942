package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine"
)

// TestSignInBehindProxyLocksNoOneElse: behind HAProxy every client had the
// proxy's address, so 14 wrong sign-ins with random names made every
// user's right password answer 429. The client address is now the one the
// trusted proxy forwards: the guesser's address is locked, others sign in.
func TestSignInBehindProxyLocksNoOneElse(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, Engine: engine.Config{MemoryLimit: "256MB"}})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	for i := range api.SignInFreeAddrFailures + 5 {
		ts.SignInAs("203.0.113.5", fmt.Sprintf("nobody%d", i), "wrong password")
	}
	if resp := ts.SignInAs("203.0.113.5", "ana", "correct horse battery"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the guessing address: got %d, want 429", resp.StatusCode)
	}
	if resp := ts.SignInAs("198.51.100.7", "ana", "correct horse battery"); resp.StatusCode != http.StatusOK {
		t.Errorf("another client behind the proxy: got %d, want 200", resp.StatusCode)
	}
	// A client that sends its own header still counts as the address the
	// proxy forwards last.
	if resp := ts.SignInAs("198.51.100.8, 203.0.113.5", "ana", "correct horse battery"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a forged header before the proxy's: got %d, want 429", resp.StatusCode)
	}
}

// TestSignInForwardedHeaderIgnoredWithoutProxy: without trusted proxies a
// client cannot pick its address with X-Forwarded-For to dodge its lock.
func TestSignInForwardedHeaderIgnoredWithoutProxy(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	for i := range api.SignInFreeAddrFailures + 2 {
		ts.SignInAs(fmt.Sprintf("192.0.2.%d", i+1), fmt.Sprintf("nobody%d", i), "wrong password")
	}
	if resp := ts.SignInAs("192.0.2.200", "ana", "correct horse battery"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a forwarded address from a client that is no proxy: got %d, want 429", resp.StatusCode)
	}
}

// TestAdminNotLockedOut: 28 wrong attempts as admin, ADMIN and " Admin "
// over 17 minutes locked admin out of web sign-in, renewed by one attempt
// per 15 minutes. The guesser's address is locked; admin signs in from an
// address that never failed, and guesses from fresh addresses are paced.
func TestAdminNotLockedOut(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ts := apitest.New(t, apitest.Options{Config: api.Config{Now: clock, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, Engine: engine.Config{MemoryLimit: "256MB"}})
	users := ts.Users
	apitest.AddUser(t, users, "admin", "admin")
	if err := users.SetPassword("admin", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	names := []string{"admin", "ADMIN", " Admin "}
	for i := range 28 {
		ts.SignInAs("203.0.113.9", names[i%3], "guess "+fmt.Sprint(i))
		advance(17 * time.Minute / 28)
	}
	if resp := ts.SignInAs("198.51.100.20", "admin", "correct horse battery"); resp.StatusCode != http.StatusOK {
		t.Errorf("admin from an address that never failed: got %d, want 200", resp.StatusCode)
	}
	if resp := ts.SignInAs("203.0.113.9", "admin", "correct horse battery"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("admin from the guessing address: got %d, want 429", resp.StatusCode)
	}
	// Guessing admin from addresses that each failed once goes no faster
	// than the name's pace.
	codes := map[int]int{}
	for i := range 10 {
		from := fmt.Sprintf("198.18.0.%d", i+1)
		ts.SignInAs(from, "admin", "first guess")
		codes[ts.SignInAs(from, "admin", "second guess").StatusCode]++
	}
	if codes[http.StatusTooManyRequests] < 9 {
		t.Errorf("second guesses from addresses that failed: %v, want all but one paced (429)", codes)
	}
	if resp := ts.SignInAs("198.51.100.22", "admin", "correct horse battery"); resp.StatusCode != http.StatusOK {
		t.Errorf("admin from a fresh address while guesses are paced: got %d, want 200", resp.StatusCode)
	}
}

// TestSignInFloodOfRightPasswords: 150 right sign-ins at once from one
// address took the server's few hashing slots, and 2 of 5 admins signing
// in from other addresses got 429. One address's passwords are checked one
// at a time; the rest of its flood is refused at once (429, Retry-After),
// and the admins sign in.
func TestSignInFloodOfRightPasswords(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, Engine: engine.Config{MemoryLimit: "256MB"}})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	admins := make([]string, 5)
	for i := range admins {
		admins[i] = fmt.Sprintf("admin%d", i)
		apitest.AddUser(t, users, admins[i], "admin")
	}
	for _, name := range append([]string{"ana"}, admins...) {
		if err := users.SetPassword(name, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var flooded, refused atomic.Int64
	for range 150 {
		wg.Go(func() {
			resp := ts.SignInAs("203.0.113.77", "ana", "correct horse battery")
			flooded.Add(1)
			if resp.StatusCode == http.StatusTooManyRequests {
				refused.Add(1)
				if resp.Header.Get("Retry-After") == "" {
					t.Errorf("429 without Retry-After")
				}
			}
		})
	}
	codes := make([]int, len(admins))
	var admin sync.WaitGroup
	for i, name := range admins {
		admin.Go(func() {
			codes[i] = ts.SignInAs(fmt.Sprintf("198.51.100.%d", 30+i), name, "correct horse battery").StatusCode
		})
	}
	admin.Wait()
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("%s from an address of its own: got %d, want 200", admins[i], code)
		}
	}
	t.Logf("of the flood's %d sign-ins, %d refused", flooded.Load(), refused.Load())
}

// TestSignInFromAnotherSite: a form on another site signed the victim's
// browser into the attacker's account: POST /signin from a foreign origin
// got a 303 and a cookie, and POST /v1/session sent as text/plain (a form
// may send that without asking) got a 200 and a cookie. A browser's
// sign-in from another site is now refused, and the JSON route takes JSON
// only; the same site's form and programs sign in as before.
func TestSignInFromAnotherSite(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "eve", "analyst")
	if err := users.SetPassword("eve", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"name": {"eve"}, "password": {"correct horse battery"}}.Encode()
	json := `{"name": "eve", "password": "correct horse battery"}`
	host := strings.TrimPrefix(ts.URL, "http://")
	for _, tc := range []struct {
		name, path, ctype, body string
		headers                 map[string]string
		want                    int
	}{
		{"form from another origin", "/signin", "application/x-www-form-urlencoded", form, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"form, cross-site by fetch metadata", "/signin", "application/x-www-form-urlencoded", form, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"form from a null origin", "/signin", "application/x-www-form-urlencoded", form, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"JSON as text/plain", "/v1/session", "text/plain", json, nil, http.StatusUnsupportedMediaType},
		{"JSON as a form", "/v1/session", "application/x-www-form-urlencoded", json, nil, http.StatusUnsupportedMediaType},
		{"JSON without a type", "/v1/session", "", json, nil, http.StatusUnsupportedMediaType},
		{"JSON from another origin", "/v1/session", "application/json", json, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"form from this site", "/signin", "application/x-www-form-urlencoded", form, map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, http.StatusSeeOther},
		{"form from a program", "/signin", "application/x-www-form-urlencoded", form, nil, http.StatusSeeOther},
		{"JSON from this site", "/v1/session", "application/json; charset=utf-8", json, map[string]string{"Origin": "http://" + host}, http.StatusOK},
		{"JSON from a program", "/v1/session", "application/json", json, nil, http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", ts.URL+tc.path, strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cookie := false
		for _, ck := range resp.Cookies() {
			cookie = cookie || ck.Name == api.SessionCookie && ck.Value != ""
		}
		if resp.StatusCode != tc.want || cookie != (tc.want < 400) {
			t.Errorf("%s: %d, a cookie %v; want %d", tc.name, resp.StatusCode, cookie, tc.want)
		}
	}
}

// TestSignInLimitsPerUserAndAddress: during 150 right sign-ins from one
// address, other users' sign-ins got 429: the only bound on right
// passwords was the server's, one check at a time per address and a
// second's wait for the few hashing slots, which a flood shares with
// everyone. Sign-ins are now limited per user and address, and per
// address: the flood is refused at its own limit, at once, while other
// users sign in from that address and from others.
func TestSignInLimitsPerUserAndAddress(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it would stretch.
	ts := apitest.New(t, apitest.Options{Config: api.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, Engine: engine.Config{MemoryLimit: "256MB"}})
	users := ts.Users
	others := make([]string, 6)
	for i := range others {
		others[i] = fmt.Sprintf("colleague%d", i)
	}
	for _, name := range append([]string{"ana"}, others...) {
		apitest.AddUser(t, users, name, "analyst")
		if err := users.SetPassword(name, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
	}
	const flooder = "203.0.113.77"
	var wg sync.WaitGroup
	var sent, signedIn atomic.Int64
	var othersDone atomic.Bool
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for sent.Add(1) <= 150 || !othersDone.Load() {
				if ts.SignInAs(flooder, "ana", "correct horse battery").StatusCode == http.StatusOK {
					signedIn.Add(1)
				}
			}
		})
	}
	// Colleagues behind the flooder's address, and users from addresses
	// of their own, sign in during the flood.
	codes := make([]int, len(others))
	var during sync.WaitGroup
	for i, name := range others {
		from := flooder
		if i%2 == 1 {
			from = fmt.Sprintf("198.51.100.%d", 40+i)
		}
		during.Go(func() {
			time.Sleep(time.Duration(i) * 20 * time.Millisecond)
			codes[i] = ts.SignInAs(from, name, "correct horse battery").StatusCode
		})
	}
	during.Wait()
	othersDone.Store(true)
	wg.Wait()
	took := time.Since(start)
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("%s during the flood: got %d, want 200", others[i], code)
		}
	}
	if n := signedIn.Load(); n > api.SignInPairBurst+2 {
		t.Errorf("the flood signed in %d times, past its limit of %d at once", n, api.SignInPairBurst)
	}
	// Refused at its limit, the flood costs no hashing: it ends in a small
	// part of the 150 hashes' time.
	if took > 3*time.Second {
		t.Errorf("the flood and the others' sign-ins took %v, want under 3 s", took)
	}
	t.Logf("the flood signed in %d of %d times; everything took %v", signedIn.Load(), sent.Load()-8, took)
}
