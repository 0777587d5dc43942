package api

import (
	"crypto/subtle"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/api/serverdb"
)

//go:embed web/*.tmpl web/style.css
var webFiles embed.FS

// webPageSize is how many rows a table page shows.
const webPageSize = 50

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range []string{"signin", "files", "table", "approvals", "approval", "error"} {
		t, err := template.ParseFS(webFiles, "web/layout.tmpl", "web/"+name+".tmpl")
		if err != nil {
			return nil, fmt.Errorf("api: page %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// page is what every page's layout needs.
type page struct {
	Title   string
	User    string
	CSRF    string
	Message string
}

func (s *Server) render(c *echo.Context, status int, name string, data any) error {
	var b strings.Builder
	if err := s.pages[name].ExecuteTemplate(&b, name+".tmpl", data); err != nil {
		return fmt.Errorf("api: render %s: %w", name, err)
	}
	c.Response().Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'")
	return c.HTML(status, b.String())
}

// pageAuth admits a signed-in browser; anyone else goes to the sign-in
// page, told why when their session ended. Forms that change state must
// carry the session's CSRF token.
func (s *Server) pageAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		r := c.Request()
		toSignIn := func(msg string) error {
			q := url.Values{"next": {r.URL.RequestURI()}}
			if msg != "" {
				q.Set("msg", msg)
			}
			return c.Redirect(http.StatusSeeOther, "/signin?"+q.Encode())
		}
		ck, err := r.Cookie(sessionCookie)
		if err != nil || ck.Value == "" {
			return toSignIn("")
		}
		sess, err := s.system.Session(r.Context(), ck.Value, s.cfg.Now())
		if err != nil {
			return toSignIn("Your session has ended. Sign in again.")
		}
		user, err := s.users.ByID(sess.UserID)
		if err != nil {
			return toSignIn("Your account no longer exists.")
		}
		if r.Method == http.MethodPost {
			if subtle.ConstantTimeCompare([]byte(c.FormValue("csrf_token")), []byte(sess.CSRF)) != 1 {
				return datadesk.Errorf(datadesk.Forbidden, "the form is missing its CSRF token; reload the page and try again")
			}
		}
		c.Set(callerKey, datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role})
		if err := s.ownerHere(c, user.ID); err != nil {
			return err
		}
		c.Set(cookieKey, ck.Value)
		c.Set("datadesk.csrf", sess.CSRF)
		return next(c)
	}
}

func (s *Server) pageBase(c *echo.Context, title string) page {
	csrf, _ := c.Get("datadesk.csrf").(string)
	return page{Title: title, User: caller(c).Name, CSRF: csrf, Message: c.QueryParam("msg")}
}

// pageError renders an error as a page, with the same status the API uses.
func (s *Server) pageError(c *echo.Context, err error) error {
	e := datadesk.AsError(err)
	status := e.Code.Status()
	heading := "Something went wrong"
	text := e.Message
	switch e.Code {
	case datadesk.NotFound:
		heading, text = "Not found", "There is no such file or table among yours. It may have been deleted."
	case datadesk.Forbidden:
		heading = "Not allowed"
	case datadesk.Internal:
		s.cfg.Logger.Error("page failed", "path", c.Request().URL.Path, "err", err)
		text = "The server could not show this page. Try again later."
	}
	return s.render(c, status, "error", struct {
		page
		Heading, Text string
	}{s.pageBase(c, heading), heading, text})
}

func (s *Server) signInPage(c *echo.Context) error {
	msg := c.QueryParam("msg")
	return s.render(c, http.StatusOK, "signin", struct {
		page
		Next string
	}{page{Title: "Sign in", Message: msg}, safeNext(c.QueryParam("next"))})
}

// safeNext keeps redirects on this site: a path with one leading "/", no
// "//" and no backslash anywhere (browsers read "\\" as "/"), and no control
// or space characters (browsers drop tabs and newlines, so "/\t/evil" would
// become "//evil"). Anything else goes to the files page.
func safeNext(next string) string {
	const home = "/files"
	if len(next) > 2048 || !strings.HasPrefix(next, "/") || strings.Contains(next, "//") || strings.Contains(next, "\\") {
		return home
	}
	for _, r := range next {
		if r <= ' ' || r == 0x7f || unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return home
		}
	}
	return next
}

func (s *Server) signInForm(c *echo.Context) error {
	name, pw, next := c.FormValue("name"), c.FormValue("password"), safeNext(c.FormValue("next"))
	if _, _, err := s.startSession(c, name, pw); err != nil {
		status, msg := http.StatusUnauthorized, "Wrong user name or password."
		switch datadesk.ErrorCode(err) {
		case datadesk.Unauthenticated:
		case datadesk.RateLimited:
			status, msg = http.StatusTooManyRequests, datadesk.AsError(err).Message
		default:
			return err
		}
		return s.render(c, status, "signin", struct {
			page
			Next string
		}{page{Title: "Sign in", Message: msg}, next})
	}
	return c.Redirect(http.StatusSeeOther, afterSignIn(next))
}

// afterSignIn is where a sign-in goes: next, but for a download (a
// table's export), which would leave the browser on the sign-in page, the
// table's page in the same view, saying where the export is.
func afterSignIn(next string) string {
	u, err := url.Parse(next)
	if err != nil || !strings.HasPrefix(u.Path, "/tables/") || !strings.HasSuffix(u.Path, "/export") {
		return next
	}
	q := u.Query()
	format := strings.ToUpper(q.Get("format"))
	q.Del("format")
	q.Set("msg", "You are signed in. Export "+format+" again from this page: the button is above the table.")
	return strings.TrimSuffix(u.Path, "/export") + "?" + q.Encode()
}

func (s *Server) signOutForm(c *echo.Context) error {
	if err := s.endSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/signin?msg="+url.QueryEscape("You are signed out."))
}

type approvalRow struct {
	ID, Tool, UserName, ActorName, Reason, Status, Created, Expires string
	Rows, Bytes                                                     int64
}

// approvalsPage shows a page of the queue's summaries, never the calls'
// arguments, so it costs the same however big the calls are.
func (s *Server) approvalsPage(c *echo.Context) error {
	list, f, more, err := s.approvalPage(c, 100)
	if err != nil {
		return s.pageError(c, err)
	}
	rows := make([]approvalRow, len(list))
	for i := range list {
		rows[i] = rowOf(&list[i])
	}
	next := ""
	if more {
		q := url.Values{"offset": {strconv.Itoa(f.Offset + len(list))}}
		if f.Status != "" {
			q.Set("status", f.Status)
		}
		next = "/approvals?" + q.Encode()
	}
	pb := s.pageBase(c, "Approvals")
	if missing, _ := c.Get(unansweredKey).([]string); len(missing) > 0 {
		pb.Message = "Nodes " + strings.Join(missing, ", ") + " did not answer in time: their waiting calls are not listed. Reload in a moment."
	}
	return s.render(c, http.StatusOK, "approvals", struct {
		page
		Approvals []approvalRow
		Approver  bool
		Next      string
	}{pb, rows, s.mayApprove(c), next})
}

// decideApprovalForm approves or rejects from the page, through the same
// decision as the API.
func (s *Server) decideApprovalForm(approve bool) echo.HandlerFunc {
	return func(c *echo.Context) error {
		a, err := s.decide(c, approve)
		if datadesk.ErrorCode(err) == datadesk.NotFound && s.fanOut(c) {
			a, err = s.decideElsewhere(c, approve, err)
		}
		if err != nil {
			return s.pageError(c, err)
		}
		msg := "Rejected " + a.ID + "."
		switch {
		case a.Status == serverdb.ApprovalDenied:
			msg = "Not run: the policy now denies " + a.ID + " (" + a.ErrorMsg + ")."
		case approve:
			msg = "Approved " + a.ID + "."
		}
		return c.Redirect(http.StatusSeeOther, "/approvals?msg="+url.QueryEscape(msg))
	}
}
