package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
)

// A page's message travels in its address (?msg=), from the redirect after
// a form to the page it lands on, so that a reload does not repeat the
// form. A link anyone writes could put words there too ("sign in again at
// evil.example"), so every message the server makes is signed (msg_sig, an
// HMAC under the server's signing key for this use alone) and a page shows
// a message only when its signature holds.
const (
	noteParam    = "msg"
	noteSigParam = "msg_sig"
	// noteSigLen is the signature's length in bytes: 128 bits.
	noteSigLen = 16
)

// notes signs and checks pages' messages.
type notes struct{ key []byte }

func newNotes(signingKey []byte) notes {
	m := hmac.New(sha256.New, signingKey)
	m.Write([]byte("datadesk page messages"))
	return notes{key: m.Sum(nil)}
}

func (n notes) sign(msg string) string {
	m := hmac.New(sha256.New, n.key)
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:noteSigLen])
}

// set puts msg and its signature in v.
func (n notes) set(v url.Values, msg string) {
	v.Set(noteParam, msg)
	v.Set(noteSigParam, n.sign(msg))
}

// of is the message of an address, "" unless the server made it.
func (n notes) of(v url.Values) string {
	msg := v.Get(noteParam)
	sig, err := base64.RawURLEncoding.DecodeString(v.Get(noteSigParam))
	if msg == "" || err != nil {
		return ""
	}
	want, _ := base64.RawURLEncoding.DecodeString(n.sign(msg))
	if !hmac.Equal(sig, want) {
		return ""
	}
	return msg
}

// withNote is path with the query q (left as it is) and msg, signed.
func (n notes) withNote(path string, q url.Values, msg string) string {
	v := url.Values{}
	for k, vals := range q {
		v[k] = append([]string(nil), vals...)
	}
	n.set(v, msg)
	return path + "?" + v.Encode()
}

// SignInAddress is the sign-in page's address that comes back to next,
// with msg (when not empty) shown there.
func (h *Handler) SignInAddress(next, msg string) string {
	q := url.Values{"next": {next}}
	if msg != "" {
		h.notes.set(q, msg)
	}
	return "/signin?" + q.Encode()
}
