// Package links makes and reads signed download links: a file's URL that
// works without a token, for its owner, until it expires.
package links

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"time"

	"datadesk"
)

// TTL is how long a signed download link works.
const TTL = 10 * time.Minute

// Param carries a link's token: the owner's id bits, the expiry in Unix
// seconds and the signature, 36 bytes in base64url. One short parameter
// keeps the link short where every listed file carries one.
const Param = "t"

// OwnerParam carries a link's owner id in the clear, in a cluster, for the
// proxy to route on.
const OwnerParam = "o"

// userPrefix is the prefix of user ids, which a token leaves out.
const userPrefix = "u"

// Signer signs links under a server's key.
type Signer struct {
	// Key is at least 32 random bytes, kept across restarts so links stay
	// valid.
	Key []byte
	// Now is the clock.
	Now func() time.Time
	// Routed adds the owner in the clear (OwnerParam), for a cluster's
	// proxy.
	Routed bool
}

// signature is the HMAC-SHA256, under the key, of the file, its owner and
// the expiry, cut to its first 128 bits (RFC 2104 allows it, and it is
// ample against forgery within a link's minutes).
func (s Signer) signature(fileID, owner string, expires int64) []byte {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(fileID + "\x00" + owner + "\x00" + strconv.FormatInt(expires, 10)))
	return m.Sum(nil)[:16]
}

// URL returns a signed URL for a file's bytes that works without a token
// until it expires.
func (s Signer) URL(fileID, owner string) string {
	exp := s.Now().Add(TTL).Unix()
	_, bits, _ := datadesk.IDBytes(owner)
	tok := make([]byte, 0, 36)
	tok = append(tok, bits[:]...)
	tok = binary.BigEndian.AppendUint32(tok, uint32(exp))
	tok = append(tok, s.signature(fileID, owner, exp)...)
	link := "/v1/files/" + fileID + "/content?" + Param + "=" + base64.RawURLEncoding.EncodeToString(tok)
	if s.Routed {
		// The signature covers the owner in the token, so a changed one
		// reaches a node that refuses it.
		link += "&" + OwnerParam + "=" + owner
	}
	return link
}

// Read checks a link's token for a file and returns its owner and when
// the link was made. Errors: unauthenticated (malformed, not signed for
// this file, expired).
func (s Signer) Read(token, fileID string) (owner string, issued time.Time, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != 36 {
		return "", time.Time{}, datadesk.Errorf(datadesk.Unauthenticated, "the download link is malformed")
	}
	var bits [16]byte
	copy(bits[:], raw[:16])
	owner = datadesk.IDFromBytes(userPrefix, bits)
	exp := int64(binary.BigEndian.Uint32(raw[16:20]))
	if !hmac.Equal(raw[20:], s.signature(fileID, owner, exp)) {
		return "", time.Time{}, datadesk.Errorf(datadesk.Unauthenticated, "the download link's signature is not valid")
	}
	if s.Now().Unix() > exp {
		return "", time.Time{}, datadesk.Errorf(datadesk.Unauthenticated, "the download link expired; ask for a new one")
	}
	return owner, time.Unix(exp, 0).Add(-TTL), nil
}
