package api

import (
	"context"
	"crypto/subtle"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/rbac"
	"datadesk/serverdb"
	"datadesk/toolcall"
)

// Session and request limits.
const (
	maxChatSessionLen = 128
	// SessionTTL is how long a web session lasts after sign-in.
	SessionTTL = 12 * time.Hour
	// sessionCookie names the web session's cookie.
	sessionCookie = "datadesk_session"
	// csrfHeader carries the session's CSRF token on state-changing
	// requests made with the cookie.
	csrfHeader = "X-CSRF-Token"
	// onBehalfHeader names the user a chat platform acts for.
	onBehalfHeader = "X-On-Behalf-Of"
)

const (
	callerKey   = "datadesk.caller"
	cookieKey   = "datadesk.cookie"
	decisionKey = "datadesk.decision"
	actionKey   = "datadesk.action"
	approvalKey = "datadesk.approval"
	// csrfKey holds the signed-in session's CSRF token for a page's forms.
	csrfKey = "datadesk.csrf"
	// auditedKey marks a request whose record was written by the path it
	// took (a tool call's, by the pipeline).
	auditedKey = "datadesk.audited"
)

// authenticate resolves who is calling: a bearer token (a program, maybe a
// chat platform acting for a user where policy grants it), or a web session
// cookie, whose state-changing requests must carry the session's CSRF
// token.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		r := c.Request()
		session := r.Header.Get("X-Chat-Session-Id")
		if len(session) > maxChatSessionLen {
			return datadesk.Errorf(datadesk.Invalid, "X-Chat-Session-Id is longer than %d characters", maxChatSessionLen).WithField("X-Chat-Session-Id")
		}
		who, forwarded, err := s.fromPeer(c)
		if err != nil {
			return err
		}
		if forwarded {
			who.ChatSession = session
		} else if h := r.Header.Get("Authorization"); h != "" {
			token, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || strings.TrimSpace(token) == "" {
				return datadesk.Errorf(datadesk.Unauthenticated, "send Authorization: Bearer <token>")
			}
			user, err := s.users.Authenticate(strings.TrimSpace(token))
			if err != nil {
				return err
			}
			who = datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role, ChatSession: session}
			if target := r.Header.Get(onBehalfHeader); target != "" {
				acting, err := s.actFor(c, user, target, session)
				if err != nil {
					return err
				}
				who = acting
			}
		} else if ck, err := r.Cookie(sessionCookie); err == nil && ck.Value != "" {
			sess, user, err := s.cookieSession(r.Context(), ck.Value)
			if err != nil {
				return err
			}
			if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
				got := r.Header.Get(csrfHeader)
				if subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF)) != 1 {
					return datadesk.Errorf(datadesk.Forbidden, "a request signed in by cookie must send its session's %s header", csrfHeader)
				}
			}
			who = datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role, ChatSession: session}
			c.Set(cookieKey, ck.Value)
		} else {
			return datadesk.Errorf(datadesk.Unauthenticated, "sign in: send Authorization: Bearer <token>, or sign in at POST /v1/session")
		}
		c.Set(callerKey, who)
		if err := s.ownerHere(c, who.UserID); err != nil {
			return err
		}
		return next(c)
	}
}

// cookieSession is the live web session a cookie holds and its user: the
// one check of a cookie, for the JSON API and the pages alike. A session
// ends when it expires, is signed out, or its user is removed, changes
// password or has their tokens revoked. Errors: unauthenticated.
func (s *Server) cookieSession(ctx context.Context, token string) (*serverdb.Session, *rbac.User, error) {
	sess, err := s.system.Session(ctx, token, s.cfg.Now())
	if err != nil {
		return nil, nil, err
	}
	user, err := s.users.ByID(sess.UserID)
	if err != nil {
		return nil, nil, datadesk.Errorf(datadesk.Unauthenticated, "the session's user no longer exists")
	}
	if user.SessionEpoch != sess.Epoch {
		return nil, nil, datadesk.Errorf(datadesk.Unauthenticated, "the session ended when the password was changed or the tokens revoked; sign in again")
	}
	return sess, user, nil
}

// actFor resolves a chat platform acting for a user. The policy decides
// by the user's role (by default a platform acts for viewers and analysts
// only); an attempt is audited with both names, or with the bad name as
// sent, and the reason. The answer is the same for an unknown name and a
// refused one, so it tells nobody which users exist. Errors: forbidden.
func (s *Server) actFor(c *echo.Context, actor *rbac.User, target, session string) (datadesk.Caller, error) {
	who := datadesk.Caller{Name: auditName(target), ChatSession: session, ActorID: actor.ID, ActorName: actor.Name, ActorRole: actor.Role}
	c.Set(callerKey, who)
	c.Set(actionKey, rbac.ActionActFor)
	refuse := func(d rbac.Decision) (datadesk.Caller, error) {
		c.Set(decisionKey, d)
		return who, datadesk.Errorf(datadesk.Forbidden, "%s may not act for %q", actor.Name, who.Name).WithField(onBehalfHeader)
	}
	// A user id is accepted beside a name: a proxy routes on the id.
	user, err := s.users.ByName(target)
	if err != nil && datadesk.ValidID(target) {
		user, err = s.users.ByID(target)
	}
	if err != nil {
		return refuse(rbac.Decision{Effect: rbac.Deny, Reason: "no such user"})
	}
	who.UserID, who.Name, who.Role = user.ID, user.Name, user.Role
	c.Set(callerKey, who)
	if d := s.policy.Decide(actor.Name, actor.Role, rbac.ActionActFor, rbac.Attrs{TargetRole: user.Role}); !d.Allowed() {
		return refuse(d)
	}
	c.Set(actionKey, nil)
	return who, nil
}

// maxAuditName bounds a name from a request kept in the audit log.
const maxAuditName = 128

// auditName is a name as a request sent it, fit for the audit log: valid
// UTF-8, no control or bidi-override characters, at most maxAuditName
// bytes.
func auditName(name string) string {
	name = datadesk.CleanName(name)
	for len(name) > maxAuditName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

func caller(c *echo.Context) datadesk.Caller {
	v, _ := c.Get(callerKey).(datadesk.Caller)
	return v
}

// authorize asks the policy whether the caller may perform an HTTP action.
// Such actions cannot wait for a person, so approve counts as a refusal.
// Errors: forbidden.
func (s *Server) authorize(c *echo.Context, action string) error {
	return s.authorizeWith(c, action, rbac.Attrs{})
}

// authorizeWith is authorize with the attributes of the work the action
// does. Errors: forbidden.
func (s *Server) authorizeWith(c *echo.Context, action string, attrs rbac.Attrs) error {
	who := caller(c)
	d := s.policy.DecideAs(who, action, attrs)
	c.Set(decisionKey, d)
	c.Set(actionKey, action)
	switch d.Effect {
	case rbac.Allow:
		return nil
	case rbac.Approve:
		return datadesk.Errorf(datadesk.Forbidden, "%s needs approval, which %s cannot wait for (%s)", action, action, d.Reason)
	}
	return datadesk.Errorf(datadesk.Forbidden, "%s may not use %s: %s", who.Name, action, d.Reason)
}

// sameSite refuses a browser's request sent from another site's page (by
// its Sec-Fetch-Site header, or else its Origin), as a sign-in must be: a
// form elsewhere could otherwise sign the visitor's browser into an
// account of the form's choosing, whose uploads and questions the attacker
// then reads. A program, which sends neither header, is let through.
// Errors: forbidden.
func (s *Server) sameSite(next echo.HandlerFunc) echo.HandlerFunc {
	origins := http.NewCrossOriginProtection()
	return func(c *echo.Context) error {
		if err := origins.Check(c.Request()); err != nil {
			c.Set(actionKey, "session.sign_in")
			return datadesk.Errorf(datadesk.Forbidden, "a sign-in from another site's page is refused; sign in on this site's page")
		}
		return next(c)
	}
}

type signIn struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// signIn starts a web session: a fresh cookie at every sign-in, HttpOnly,
// SameSite=Lax, Secure under TLS, expiring with the session.
func (s *Server) signIn(c *echo.Context) error {
	// JSON only: a page elsewhere may post text/plain or a form without
	// the browser asking first, but not JSON.
	if mt, _, err := mime.ParseMediaType(c.Request().Header.Get("Content-Type")); err != nil || mt != "application/json" {
		c.Set(actionKey, "session.sign_in")
		return datadesk.Errorf(datadesk.Unsupported, "send the name and password as JSON, with Content-Type: application/json").WithField("Content-Type")
	}
	var in signIn
	if err := toolcall.DecodeBody(c.Request().Body, &in); err != nil {
		return err
	}
	user, sess, err := s.startSession(c, in.Name, in.Password)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"user": map[string]string{"id": user.ID, "name": user.Name, "role": user.Role},
		"csrf_token": sess.CSRF, "expires_at": sess.ExpiresAt})
}

// startSession checks a name and password and starts a web session: any
// session the browser had is revoked, and a fresh cookie is set, HttpOnly,
// SameSite=Lax, Secure under TLS, expiring with the session.
func (s *Server) startSession(c *echo.Context, name, password string) (*rbac.User, *serverdb.Session, error) {
	c.Set(actionKey, "session.sign_in")
	c.Set(callerKey, datadesk.Caller{Name: auditName(name)})
	keys := signInKeys(name, c.RealIP())
	wait, suspect := s.signIns.admit(keys)
	if wait > 0 {
		secs := int(wait.Round(time.Second).Seconds())
		c.Response().Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		return nil, nil, datadesk.Errorf(datadesk.RateLimited, "too many failed sign-ins from this address; try again in %d seconds", max(secs, 1))
	}
	if !s.signIns.begin(keys) {
		c.Response().Header().Set("Retry-After", "1")
		return nil, nil, datadesk.Errorf(datadesk.RateLimited, "a sign-in as this user from this address is being checked; send one at a time")
	}
	defer s.signIns.end(keys)
	if wait := s.signIns.spend(keys); wait > 0 {
		secs := max(int(wait.Round(time.Second).Seconds()), 1)
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		return nil, nil, datadesk.Errorf(datadesk.RateLimited, "too many sign-ins from this address; try again in %d seconds", secs)
	}
	release, err := s.signInTurns.enter(c.Request().Context(), keys.addr)
	if err != nil {
		c.Response().Header().Set("Retry-After", "1")
		return nil, nil, datadesk.Errorf(datadesk.RateLimited, "other sign-ins from this address are being checked; try again in a moment")
	}
	defer release()
	check := s.users.CheckPassword
	if suspect {
		check = s.users.CheckPasswordLater
	}
	user, err := check(c.Request().Context(), name, password)
	if datadesk.ErrorCode(err) == datadesk.RateLimited {
		c.Response().Header().Set("Retry-After", "1")
	}
	if datadesk.ErrorCode(err) == datadesk.Unauthenticated {
		s.signIns.fail(keys)
	}
	if err != nil {
		return nil, nil, err
	}
	s.signIns.succeed(keys)
	c.Set(callerKey, datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role})
	if old, err := c.Request().Cookie(sessionCookie); err == nil {
		_ = s.system.RevokeSession(c.Request().Context(), old.Value)
	}
	token, sess, err := s.createSession(c, user.ID)
	if err != nil {
		return nil, nil, err
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: sessionCookie, Value: token, Path: "/", Expires: sess.ExpiresAt,
		MaxAge: int(SessionTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.Scheme() == "https"})
	return user, sess, nil
}

// endSession revokes the cookie's session and clears the cookie.
func (s *Server) endSession(c *echo.Context) error {
	if tok, ok := c.Get(cookieKey).(string); ok {
		if err := s.system.RevokeSession(c.Request().Context(), tok); err != nil {
			return err
		}
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.Scheme() == "https"})
	return nil
}

// session describes the caller, and for a cookie session its CSRF token.
func (s *Server) session(c *echo.Context) error {
	who := caller(c)
	out := map[string]any{"user": map[string]string{"id": who.UserID, "name": who.Name, "role": who.Role}}
	if tok, ok := c.Get(cookieKey).(string); ok {
		sess, err := s.system.Session(c.Request().Context(), tok, s.cfg.Now())
		if err != nil {
			return err
		}
		out["csrf_token"], out["expires_at"] = sess.CSRF, sess.ExpiresAt
	}
	return c.JSON(http.StatusOK, out)
}

// signOut revokes the cookie's session and clears the cookie.
func (s *Server) signOut(c *echo.Context) error {
	c.Set(actionKey, "session.sign_out")
	if err := s.endSession(c); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// pageAuth admits a signed-in browser; anyone else goes to the sign-in
// page, told why when their session ended. Forms that change state must
// carry the session's CSRF token.
func (s *Server) pageAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return s.signedInPage(next, true)
}

// streamedPageAuth is pageAuth for a form the handler reads as a stream
// (the upload): the handler checks the form's CSRF token itself, as it
// reads it, so that no byte of the body is read before the policy is
// asked.
func (s *Server) streamedPageAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return s.signedInPage(next, false)
}

func (s *Server) signedInPage(next echo.HandlerFunc, readForm bool) echo.HandlerFunc {
	return func(c *echo.Context) error {
		r := c.Request()
		toSignIn := func(msg string) error {
			return c.Redirect(http.StatusSeeOther, s.web.SignInAddress(r.URL.RequestURI(), msg))
		}
		ck, err := r.Cookie(sessionCookie)
		if err != nil || ck.Value == "" {
			return toSignIn("")
		}
		sess, user, err := s.cookieSession(r.Context(), ck.Value)
		if err != nil {
			return toSignIn("Your session has ended. Sign in again.")
		}
		if r.Method == http.MethodPost && readForm {
			if subtle.ConstantTimeCompare([]byte(c.FormValue("csrf_token")), []byte(sess.CSRF)) != 1 {
				return datadesk.Errorf(datadesk.Forbidden, "the form is missing its CSRF token; reload the page and try again")
			}
		}
		c.Set(callerKey, datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role})
		if err := s.ownerHere(c, user.ID); err != nil {
			return err
		}
		c.Set(cookieKey, ck.Value)
		c.Set(csrfKey, sess.CSRF)
		return next(c)
	}
}

// csrfToken is the signed-in session's CSRF token, for the forms of a page.
func csrfToken(c *echo.Context) string {
	csrf, _ := c.Get(csrfKey).(string)
	return csrf
}
