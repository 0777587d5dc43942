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
// fast, and never hashes more than the slots at once.
const maxHashWait = time.Second

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

// SetPassword sets a user's password for signing in to the web page.
// Errors: not_found (name), invalid (too short).
func (u *Users) SetPassword(name, pw string) error {
	if len([]rune(pw)) < MinPasswordLen {
		return datadesk.Errorf(datadesk.Invalid, "the password must have at least %d characters", MinPasswordLen).WithField("password")
	}
	h := hashPassword(pw)
	return u.update(func(db *usersFile) error {
		for i := range db.Users {
			if db.Users[i].Name == name {
				db.Users[i].PasswordHash = h
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
	wait, cancel := context.WithTimeout(ctx, maxHashWait)
	defer cancel()
	select {
	case u.hashing <- struct{}{}:
	case <-wait.Done():
		return nil, datadesk.Errorf(datadesk.RateLimited, "the server is busy checking other sign-ins; try again in a moment")
	}
	ok := checkPassword(encoded, pw)
	u.hashes.Add(1)
	<-u.hashing
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
