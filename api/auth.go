package api

import (
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
)

// maxChatSessionLen bounds the X-Chat-Session-Id header.
const maxChatSessionLen = 128

const callerKey = "datadesk.caller"

// authenticate resolves the bearer token to a caller, with the chat session
// the request belongs to.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		h := c.Request().Header.Get("Authorization")
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || token == "" {
			return datadesk.Errorf(datadesk.Unauthenticated, "sign in: send Authorization: Bearer <token>")
		}
		user, err := s.users.Authenticate(strings.TrimSpace(token))
		if err != nil {
			return err
		}
		session := c.Request().Header.Get("X-Chat-Session-Id")
		if len(session) > maxChatSessionLen {
			return datadesk.Errorf(datadesk.Invalid, "X-Chat-Session-Id is longer than %d characters", maxChatSessionLen).WithField("X-Chat-Session-Id")
		}
		c.Set(callerKey, datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role, ChatSession: session})
		return next(c)
	}
}

func caller(c *echo.Context) datadesk.Caller {
	v, _ := c.Get(callerKey).(datadesk.Caller)
	return v
}

// authorize asks the policy whether the caller may perform action.
// Errors: forbidden.
func (s *Server) authorize(c *echo.Context, action string) error {
	who := caller(c)
	d := s.policy.Decide(who.Role, action)
	if !d.Allowed {
		return datadesk.Errorf(datadesk.Forbidden, "%s may not use %s (role %s)", who.Name, action, who.Role)
	}
	return nil
}
