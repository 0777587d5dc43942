package api

import (
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/links"
)

// signedOrAuthenticated lets a request through with a valid signature for
// the file in its path, acting as the file's owner, or else with a bearer
// token. Ownership is checked again when the file is opened: the owner's
// own store must hold it.
func (s *Server) signedOrAuthenticated(next echo.HandlerFunc) echo.HandlerFunc {
	authed := s.authenticate(next)
	return func(c *echo.Context) error {
		q := c.Request().URL.Query()
		token := q.Get(links.Param)
		if token == "" {
			return authed(c)
		}
		owner, issued, err := s.links.Read(token, c.Param("id"))
		if err != nil {
			return err
		}
		// A link lives no longer than its user, nor past the revocation of
		// the credentials that made it. Links count whole seconds: one made
		// in the second of a revocation ends with it.
		user, err := s.users.ByID(owner)
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
