package rbac

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"datadesk"
)

// Users keeps users and their bearer tokens in one JSON file in the data
// directory. Tokens are stored as SHA-256 hashes: they are 256 random bits,
// so a fast hash is enough and a leaked file reveals no token. The file is
// changed under an exclusive lock and replaced atomically, so the CLI can add
// users while the server runs; the server rereads it when it changes.
type Users struct {
	path string

	// hashing holds a slot for each password hash running: see hashSlots.
	hashing *hashGate
	// hashWait is how long a check waits for a slot (maxHashWait).
	hashWait time.Duration
	// hashes counts the password hashes computed, each attempt's one.
	hashes atomic.Int64

	mu      sync.Mutex
	modTime time.Time
	size    int64
	db      usersFile
}

type usersFile struct {
	Users []User `json:"users"`
}

// User is a person or program that can sign in.
type User struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	Tokens    []Token   `json:"tokens,omitempty"`
	// PasswordHash is an Argon2id hash, for signing in to the web page.
	PasswordHash string `json:"password_hash,omitempty"`
	// LinksValidFrom, once tokens were revoked, is when the signed download
	// links the user's credentials made before stopped working.
	LinksValidFrom time.Time `json:"links_valid_from,omitzero"`
	// SessionEpoch counts the changes that end the user's web sessions:
	// a new password and revoked tokens. A session lives only in the
	// epoch it began in.
	SessionEpoch int64 `json:"session_epoch,omitzero"`
}

// Token is a stored bearer token: only its hash.
type Token struct {
	Hash      string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
}

var nameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)

// OpenUsers returns the user store of a data directory.
func OpenUsers(dir string) (*Users, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rbac: %w", err)
	}
	return &Users{path: filepath.Join(dir, "users.json"), hashing: newHashGate(hashSlots()), hashWait: maxHashWait}, nil
}

// Empty reports whether no user exists yet.
func (u *Users) Empty() (bool, error) {
	db, err := u.load()
	if err != nil {
		return false, err
	}
	return len(db.Users) == 0, nil
}

// Add creates a user with a role and returns them with a new bearer token,
// the only time the token is seen. Errors: invalid (name, role), conflict
// (name taken).
func (u *Users) Add(name, role string) (*User, string, error) {
	if !nameRe.MatchString(name) {
		return nil, "", datadesk.Errorf(datadesk.Invalid,
			"user name %q is not allowed: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name).WithField("name")
	}
	if !slices.Contains(Roles, role) {
		return nil, "", datadesk.Errorf(datadesk.Invalid, "unknown role %q", role).WithField("role").WithAllowed(Roles...)
	}
	id := datadesk.NewID("u")
	token := newToken(id)
	user := User{ID: id, Name: name, Role: role, CreatedAt: time.Now().UTC(),
		Tokens: []Token{{Hash: hashToken(token), CreatedAt: time.Now().UTC()}}}
	err := u.update(func(db *usersFile) error {
		for _, x := range db.Users {
			if x.Name == name {
				return datadesk.Errorf(datadesk.Conflict, "a user named %q exists", name).WithField("name")
			}
		}
		db.Users = append(db.Users, user)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return &user, token, nil
}

// Authenticate returns the user a bearer token belongs to.
// Errors: unauthenticated.
func (u *Users) Authenticate(token string) (*User, error) {
	db, err := u.load()
	if err != nil {
		return nil, err
	}
	h := hashToken(token)
	for i := range db.Users {
		for _, t := range db.Users[i].Tokens {
			if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(h)) == 1 {
				user := db.Users[i]
				return &user, nil
			}
		}
	}
	return nil, datadesk.Errorf(datadesk.Unauthenticated, "the bearer token is not valid")
}

// change applies fn to the user named name. Errors: not_found.
func (u *Users) change(name string, fn func(*User) error) error {
	return u.update(func(db *usersFile) error {
		for i := range db.Users {
			if db.Users[i].Name == name {
				return fn(&db.Users[i])
			}
		}
		return datadesk.Errorf(datadesk.NotFound, "no user named %q", name).WithField("name")
	})
}

// SetRole gives a user another role; their tokens and sessions act with
// it from their next request. Errors: not_found, invalid (role).
func (u *Users) SetRole(name, role string) error {
	if !slices.Contains(Roles, role) {
		return datadesk.Errorf(datadesk.Invalid, "unknown role %q", role).WithField("role").WithAllowed(Roles...)
	}
	return u.change(name, func(user *User) error { user.Role = role; return nil })
}

// AddToken gives a user one more bearer token and returns it, the only
// time it is seen. Errors: not_found.
func (u *Users) AddToken(name string) (string, error) {
	var token string
	err := u.change(name, func(user *User) error {
		token = newToken(user.ID)
		user.Tokens = append(user.Tokens, Token{Hash: hashToken(token), CreatedAt: time.Now().UTC()})
		return nil
	})
	return token, err
}

// RevokeTokens removes every bearer token of a user, and ends their web
// sessions and the signed download links their credentials made so far.
// Errors: not_found.
func (u *Users) RevokeTokens(name string) error {
	return u.change(name, func(user *User) error {
		user.Tokens = nil
		user.LinksValidFrom = time.Now().UTC()
		user.SessionEpoch++
		return nil
	})
}

// Remove deletes a user: their tokens, sessions and signed links stop
// working; their files stay in the data directory until removed by hand.
// Errors: not_found.
func (u *Users) Remove(name string) error {
	return u.update(func(db *usersFile) error {
		for i := range db.Users {
			if db.Users[i].Name == name {
				db.Users = slices.Delete(db.Users, i, i+1)
				return nil
			}
		}
		return datadesk.Errorf(datadesk.NotFound, "no user named %q", name).WithField("name")
	})
}

// List returns every user.
func (u *Users) List() ([]User, error) {
	db, err := u.load()
	if err != nil {
		return nil, err
	}
	return slices.Clone(db.Users), nil
}

// newToken returns a bearer token for a user: `dd_<user id>.<secret>`, the
// secret 256 random bits. The id in the clear lets a proxy send every
// request of one owner to the node that holds them; the secret alone
// authenticates, and only the whole token's hash is stored.
func newToken(userID string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "dd_" + userID + "." + base64.RawURLEncoding.EncodeToString(b[:])
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// load returns the users, rereading the file only when it changed.
func (u *Users) load() (usersFile, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	st, err := os.Stat(u.path)
	if errors.Is(err, os.ErrNotExist) {
		return usersFile{}, nil
	}
	if err != nil {
		return usersFile{}, fmt.Errorf("rbac: %w", err)
	}
	if st.ModTime().Equal(u.modTime) && st.Size() == u.size {
		return u.db, nil
	}
	b, err := os.ReadFile(u.path)
	if err != nil {
		return usersFile{}, fmt.Errorf("rbac: %w", err)
	}
	var db usersFile
	if err := json.Unmarshal(b, &db); err != nil {
		return usersFile{}, fmt.Errorf("rbac: %s: %w", u.path, err)
	}
	u.db, u.modTime, u.size = db, st.ModTime(), st.Size()
	return db, nil
}

// update changes the file under an exclusive lock shared with other
// processes, and replaces it atomically.
func (u *Users) update(change func(*usersFile) error) error {
	lock, err := os.OpenFile(u.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("rbac: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	var db usersFile
	b, err := os.ReadFile(u.path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &db); err != nil {
			return fmt.Errorf("rbac: %s: %w", u.path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("rbac: %w", err)
	}
	if err := change(&db); err != nil {
		return err
	}
	out, err := json.MarshalIndent(db, "", "  ")
	if err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	tmp := u.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	if _, err := f.Write(out); err != nil {
		f.Close()
		return fmt.Errorf("rbac: %w", err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	if err := os.Rename(tmp, u.path); err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	return nil
}
