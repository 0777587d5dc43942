package api

import (
	"crypto/subtle"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
)

//go:embed web/*.tmpl web/style.css
var webFiles embed.FS

// webPageSize is how many rows a table page shows.
const webPageSize = 50

// filterOps are the filter operators a page offers, as query_table has them.
var filterOps = []string{"contains", "eq", "ne", "gt", "gte", "lt", "lte", "in", "is_null"}

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range []string{"signin", "files", "table", "approvals", "error"} {
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
	status := statusOf[e.Code]
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

// safeNext keeps redirects on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/files"
	}
	return next
}

func (s *Server) signInForm(c *echo.Context) error {
	name, pw, next := c.FormValue("name"), c.FormValue("password"), safeNext(c.FormValue("next"))
	if _, _, err := s.startSession(c, name, pw); err != nil {
		if datadesk.ErrorCode(err) != datadesk.Unauthenticated {
			return err
		}
		return s.render(c, http.StatusUnauthorized, "signin", struct {
			page
			Next string
		}{page{Title: "Sign in", Message: "Wrong user name or password."}, next})
	}
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) signOutForm(c *echo.Context) error {
	if err := s.endSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/signin?msg="+url.QueryEscape("You are signed out."))
}

type approvalRow struct {
	ID, Tool, Args, UserName, ActorName, Reason, Status, Expires string
}

func (s *Server) approvalsPage(c *echo.Context) error {
	approver := s.mayApprove(c)
	owner := caller(c).UserID
	if approver {
		owner = ""
	}
	list, err := s.system.Approvals(c.Request().Context(), owner, "", 200, s.cfg.Now())
	if err != nil {
		return s.pageError(c, err)
	}
	rows := make([]approvalRow, len(list))
	for i, a := range list {
		args := string(a.Arguments)
		if len(args) > 300 {
			args = args[:300] + "…"
		}
		rows[i] = approvalRow{ID: a.ID, Tool: a.Tool, Args: args, UserName: a.UserName, ActorName: a.ActorName, Reason: a.Reason,
			Status: a.Status, Expires: a.ExpiresAt.Format("2006-01-02 15:04")}
	}
	return s.render(c, http.StatusOK, "approvals", struct {
		page
		Approvals []approvalRow
		Approver  bool
	}{s.pageBase(c, "Approvals"), rows, approver})
}

// decideApprovalForm approves or rejects from the page, through the same
// decision as the API.
func (s *Server) decideApprovalForm(approve bool) echo.HandlerFunc {
	return func(c *echo.Context) error {
		if _, err := s.decide(c, approve); err != nil {
			return s.pageError(c, err)
		}
		verb := "Rejected"
		if approve {
			verb = "Approved"
		}
		return c.Redirect(http.StatusSeeOther, "/approvals?msg="+url.QueryEscape(verb+" "+c.Param("id")+"."))
	}
}
