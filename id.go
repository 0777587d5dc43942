package datadesk

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns an opaque, unguessable identifier: prefix, an underscore and
// 128 random bits in lower-case base32.
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// ValidID reports whether s has the shape NewID produces, so that ids from
// requests can be checked before they reach a database or a path.
func ValidID(s string) bool {
	i := strings.IndexByte(s, '_')
	if i < 1 || i > 8 || len(s)-i-1 != 26 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7' || r == '_') {
			return false
		}
	}
	return true
}

// Caller is who makes a request: the signed-in user and the chat session the
// request belongs to, if any.
type Caller struct {
	UserID      string
	Name        string
	Role        string
	ChatSession string
	// ActorID, ActorName and ActorRole are set when a chat platform acts
	// for the user: the platform's own identity, recorded beside the
	// user's, whose role caps what the call may do.
	ActorID   string
	ActorName string
	ActorRole string
}

// IDBytes returns the prefix and the 128 random bits of an id NewID made.
func IDBytes(id string) (prefix string, bits [16]byte, ok bool) {
	if !ValidID(id) {
		return "", bits, false
	}
	i := strings.IndexByte(id, '_')
	b, err := idEncoding.DecodeString(id[i+1:])
	if err != nil || len(b) != 16 {
		return "", bits, false
	}
	copy(bits[:], b)
	return id[:i], bits, true
}

// IDFromBytes is the id with the given prefix and bits: IDBytes reversed.
func IDFromBytes(prefix string, bits [16]byte) string {
	return prefix + "_" + idEncoding.EncodeToString(bits[:])
}
