package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
)

// DownloadURLTTL is how long a signed download URL works.
const DownloadURLTTL = 10 * time.Minute

// signature is the HMAC-SHA256, under the server's key, of the file, its
// owner and the expiry.
func (s *Server) signature(fileID, owner string, expires int64) string {
	m := hmac.New(sha256.New, s.cfg.SigningKey)
	m.Write([]byte(fileID + "\x00" + owner + "\x00" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// downloadURL returns a signed URL for a file's bytes that works without a
// token until it expires.
func (s *Server) downloadURL(fileID, owner string) string {
	exp := s.cfg.Now().Add(DownloadURLTTL).Unix()
	q := url.Values{}
	q.Set("owner", owner)
	q.Set("expires", strconv.FormatInt(exp, 10))
	q.Set("signature", s.signature(fileID, owner, exp))
	return "/v1/files/" + fileID + "/content?" + q.Encode()
}

// signedOrAuthenticated lets a request through with a valid signature for
// the file in its path, acting as the file's owner, or else with a bearer
// token. Ownership is checked again when the file is opened: the owner's
// own store must hold it.
func (s *Server) signedOrAuthenticated(next echo.HandlerFunc) echo.HandlerFunc {
	authed := s.authenticate(next)
	return func(c *echo.Context) error {
		q := c.Request().URL.Query()
		sig := q.Get("signature")
		if sig == "" {
			return authed(c)
		}
		owner := q.Get("owner")
		exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
		if err != nil || !datadesk.ValidID(owner) {
			return datadesk.Errorf(datadesk.Unauthenticated, "the download link is malformed")
		}
		want := s.signature(c.Param("id"), owner, exp)
		if !hmac.Equal([]byte(sig), []byte(want)) {
			return datadesk.Errorf(datadesk.Unauthenticated, "the download link's signature is not valid")
		}
		if s.cfg.Now().Unix() > exp {
			return datadesk.Errorf(datadesk.Unauthenticated, "the download link expired; ask for a new one")
		}
		c.Set(callerKey, datadesk.Caller{UserID: owner, Role: signedRole})
		return next(c)
	}
}

// signedRole is the role of a signed download: it may read that one file.
const signedRole = "signed-download"
