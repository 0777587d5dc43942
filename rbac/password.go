package rbac

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"

	"datadesk"
)

// Password hashing: Argon2id with OWASP's minimum parameters (19 MiB,
// 2 passes, 1 lane), encoded in the PHC string format.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	// MinPasswordLen is the shortest password accepted.
	MinPasswordLen = 10
)

func hashPassword(pw string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// maxHashWait is how long a password check waits for a hashing slot before
// it answers rate_limited: a flood of sign-ins queues briefly, then fails
// fast, and never hashes more than the slots at once. A flood of right
// passwords is held at its limits of a name and address before it hashes,
// so the queue a person's sign-in meets is a few hashes long: two seconds
// leave room for a node whose cores are busy.
const maxHashWait = 2 * time.Second

// hashGate hands out hashing slots, first to attempts that are not
// "later", then to those that are, each group in arrival order.
type hashGate struct {
	mu      sync.Mutex
	slots   int
	free    int
	waiting [2][]chan struct{}
}

func newHashGate(slots int) *hashGate { return &hashGate{slots: slots, free: slots} }

// inUse returns how many slots are taken.
func (g *hashGate) inUse() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.slots - g.free
}

// acquire waits for a slot until ctx ends; it reports whether it got one.
func (g *hashGate) acquire(ctx context.Context, later bool) bool {
	g.mu.Lock()
	if g.free > 0 && len(g.waiting[0]) == 0 && (!later || len(g.waiting[1]) == 0) {
		g.free--
		g.mu.Unlock()
		return true
	}
	q := 0
	if later {
		q = 1
	}
	ch := make(chan struct{}, 1)
	g.waiting[q] = append(g.waiting[q], ch)
	g.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, w := range g.waiting[q] {
		if w == ch {
			g.waiting[q] = append(g.waiting[q][:i], g.waiting[q][i+1:]...)
			return false
		}
	}
	// The slot was handed over as ctx ended: keep it.
	return true
}

// release gives the slot to the first waiter, or frees it.
func (g *hashGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for q := range g.waiting {
		if len(g.waiting[q]) > 0 {
			ch := g.waiting[q][0]
			g.waiting[q] = g.waiting[q][1:]
			ch <- struct{}{}
			return
		}
	}
	g.free++
}

// hashSlots is how many Argon2id hashes may run at once: one per core,
// leaving one core to serve everything else. Each takes argonMemory, so
// memory stays flat whatever the rate of attempts.
func hashSlots() int { return max(1, runtime.GOMAXPROCS(0)-1) }

func checkPassword(encoded, pw string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// SetPassword sets a user's password for signing in to the web page, and
// ends the web sessions begun with the one before. Errors: not_found
// (name), invalid (too short).
func (u *Users) SetPassword(name, pw string) error {
	if len([]rune(pw)) < MinPasswordLen {
		return datadesk.Errorf(datadesk.Invalid, "the password must have at least %d characters", MinPasswordLen).WithField("password")
	}
	h := hashPassword(pw)
	return u.update(func(db *usersFile) error {
		for i := range db.Users {
			if db.Users[i].Name == name {
				db.Users[i].PasswordHash = h
				db.Users[i].SessionEpoch++
				return nil
			}
		}
		return datadesk.Errorf(datadesk.NotFound, "no user named %q", name).WithField("name")
	})
}

// CheckPassword returns the user a name and password belong to. A wrong
// name, a user without a password and a wrong password answer alike and
// take the same time: each attempt computes exactly one Argon2id hash (of a
// dummy when there is no real one), within the bound of hashing slots.
// Errors: unauthenticated; rate_limited when no slot frees up in time.
func (u *Users) CheckPassword(ctx context.Context, name, pw string) (*User, error) {
	return u.checkPassword(ctx, name, pw, false)
}

// CheckPasswordLater is CheckPassword for an attempt from a source that
// failed before: it gets a hashing slot only when no other attempt waits
// for one, so a flood of guesses never keeps a right password from being
// checked. Errors: as CheckPassword.
func (u *Users) CheckPasswordLater(ctx context.Context, name, pw string) (*User, error) {
	return u.checkPassword(ctx, name, pw, true)
}

func (u *Users) checkPassword(ctx context.Context, name, pw string, later bool) (*User, error) {
	db, err := u.load()
	if err != nil {
		return nil, err
	}
	var user *User
	encoded := dummyHash()
	for i := range db.Users {
		if db.Users[i].Name == name && db.Users[i].PasswordHash != "" {
			user, encoded = &db.Users[i], db.Users[i].PasswordHash
		}
	}
	wait, cancel := context.WithTimeout(ctx, u.hashWait)
	defer cancel()
	if !u.hashing.acquire(wait, later) {
		return nil, datadesk.Errorf(datadesk.RateLimited, "the server is busy checking other sign-ins; try again in a moment")
	}
	ok := checkPassword(encoded, pw)
	u.hashes.Add(1)
	u.hashing.release()
	if !ok || user == nil {
		return nil, datadesk.Errorf(datadesk.Unauthenticated, "wrong user name or password")
	}
	found := *user
	return &found, nil
}

// dummyHash is checked for names without a password, with the same
// parameters as real ones.
var dummyHash = sync.OnceValue(func() string { return hashPassword("not a password of anyone") })

// ByName returns a user by name. Errors: not_found.
func (u *Users) ByName(name string) (*User, error) {
	db, err := u.load()
	if err != nil {
		return nil, err
	}
	for i := range db.Users {
		if db.Users[i].Name == name {
			user := db.Users[i]
			return &user, nil
		}
	}
	return nil, datadesk.Errorf(datadesk.NotFound, "no user named %q", name)
}

// ByID returns a user by id. Errors: not_found.
func (u *Users) ByID(id string) (*User, error) {
	db, err := u.load()
	if err != nil {
		return nil, err
	}
	for i := range db.Users {
		if db.Users[i].ID == id {
			user := db.Users[i]
			return &user, nil
		}
	}
	return nil, datadesk.Errorf(datadesk.NotFound, "no user with id %q", id)
}
