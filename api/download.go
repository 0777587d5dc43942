package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
)

// DownloadURLTTL is how long a signed download URL works.
const DownloadURLTTL = 10 * time.Minute

// signature is the HMAC-SHA256, under the server's key, of the file, its
// owner and the expiry, cut to its first 128 bits (RFC 2104 allows it, and
// it is ample against forgery within a link's minutes).
func (s *Server) signature(fileID, owner string, expires int64) []byte {
	m := hmac.New(sha256.New, s.cfg.SigningKey)
	m.Write([]byte(fileID + "\x00" + owner + "\x00" + strconv.FormatInt(expires, 10)))
	return m.Sum(nil)[:16]
}

// linkParam carries a signed download link's token: the owner's id bits,
// the expiry in Unix seconds and the signature, 36 bytes in base64url. One
// short parameter keeps the link short where every listed file carries one.
const linkParam = "t"

// userPrefix is the prefix of user ids, which a link token leaves out.
const userPrefix = "u"

// downloadURL returns a signed URL for a file's bytes that works without a
// token until it expires.
func (s *Server) downloadURL(fileID, owner string) string {
	exp := s.cfg.Now().Add(DownloadURLTTL).Unix()
	_, bits, _ := datadesk.IDBytes(owner)
	tok := make([]byte, 0, 36)
	tok = append(tok, bits[:]...)
	tok = binary.BigEndian.AppendUint32(tok, uint32(exp))
	tok = append(tok, s.signature(fileID, owner, exp)...)
	link := "/v1/files/" + fileID + "/content?" + linkParam + "=" + base64.RawURLEncoding.EncodeToString(tok)
	if s.clustered() {
		// The owner in the clear, for the proxy to route on; the
		// signature covers the owner in the token, so a changed one
		// reaches a node that refuses it.
		link += "&" + ownerParam + "=" + owner
	}
	return link
}

// ownerParam carries a signed link's owner id for the proxy, in a cluster.
const ownerParam = "o"

// readLink splits a link token into owner, expiry and signature.
func readLink(token string) (owner string, exp int64, sig []byte, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != 36 {
		return "", 0, nil, false
	}
	var bits [16]byte
	copy(bits[:], raw[:16])
	return datadesk.IDFromBytes(userPrefix, bits), int64(binary.BigEndian.Uint32(raw[16:20])), raw[20:], true
}

// signedOrAuthenticated lets a request through with a valid signature for
// the file in its path, acting as the file's owner, or else with a bearer
// token. Ownership is checked again when the file is opened: the owner's
// own store must hold it.
func (s *Server) signedOrAuthenticated(next echo.HandlerFunc) echo.HandlerFunc {
	authed := s.authenticate(next)
	return func(c *echo.Context) error {
		q := c.Request().URL.Query()
		token := q.Get(linkParam)
		if token == "" {
			return authed(c)
		}
		owner, exp, sig, ok := readLink(token)
		if !ok {
			return datadesk.Errorf(datadesk.Unauthenticated, "the download link is malformed")
		}
		if !hmac.Equal(sig, s.signature(c.Param("id"), owner, exp)) {
			return datadesk.Errorf(datadesk.Unauthenticated, "the download link's signature is not valid")
		}
		if s.cfg.Now().Unix() > exp {
			return datadesk.Errorf(datadesk.Unauthenticated, "the download link expired; ask for a new one")
		}
		// A link lives no longer than its user, nor past the revocation of
		// the credentials that made it. Links count whole seconds: one made
		// in the second of a revocation ends with it.
		user, err := s.users.ByID(owner)
		issued := time.Unix(exp, 0).Add(-DownloadURLTTL)
		if err != nil || !user.LinksValidFrom.IsZero() && !issued.After(user.LinksValidFrom.Truncate(time.Second)) {
			return datadesk.Errorf(datadesk.Unauthenticated, "the download link was revoked; ask for a new one")
		}
		c.Set(callerKey, datadesk.Caller{UserID: owner, Role: signedRole})
		if err := s.ownerHere(c, owner); err != nil {
			return err
		}
		return next(c)
	}
}

// signedRole is the role of a signed download: it may read that one file.
const signedRole = "signed-download"
