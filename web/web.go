// Package web is datadesk's page for analysts: the files list, a table
// page with filters, facets, views, grouping and a chart, exports, and
// the approvals queue, rendered on the server with html/template. Its
// tables are read through the same plans as the tools' (catalog), its
// uploads and approval decisions through the server's own services.
package web

import (
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/rbac"
	"datadesk/serverdb"
	"datadesk/surface"
)

//go:embed pages/*.tmpl pages/style.css pages/upload.js
var webFiles embed.FS

// webPageSize is how many rows a table page shows.
const webPageSize = 50

// Deps are what the web page uses of the server it is part of: its
// stores and policy, and the server's own ways to authorise, upload,
// export, sign in and decide approvals, which the API shares.
type Deps struct {
	surface.Services
	Engine *engine.Engine
	Policy *rbac.Policy
	System *serverdb.DB
	Logger *slog.Logger

	// CSRF is the signed-in session's token for forms.
	CSRF func(*echo.Context) string
	// StartSession and EndSession sign a browser in and out.
	StartSession func(c *echo.Context, name, password string) (*rbac.User, *serverdb.Session, error)
	EndSession   func(c *echo.Context) error
	// DecideElsewhere decides an approval on the node that holds it.
	DecideElsewhere func(c *echo.Context, approve bool, err error) (*serverdb.Approval, error)
}

// Handler serves the analysts' pages: server-rendered, signed in by
// cookie, no script needed to see data.
type Handler struct {
	d     Deps
	pages map[string]*template.Template
	notes notes
}

// NewHandler returns the web page over its dependencies.
func NewHandler(d Deps) (*Handler, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{d: d, pages: pages, notes: newNotes(d.Links.Key)}, nil
}

// Stylesheet serves the pages' style sheet.
func (h *Handler) Stylesheet(c *echo.Context) error {
	return asset(c, "pages/style.css", "text/css; charset=utf-8")
}

// Script serves the files page's upload script, which shows an upload's
// progress; every page works without it.
func (h *Handler) Script(c *echo.Context) error {
	return asset(c, "pages/upload.js", "text/javascript; charset=utf-8")
}

// asset serves an embedded file, cached for an hour.
func asset(c *echo.Context, name, contentType string) error {
	b, err := webFiles.ReadFile(name)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "max-age=3600")
	return c.Blob(http.StatusOK, contentType, b)
}

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range []string{"signin", "files", "table", "approvals", "approval", "error"} {
		t, err := template.ParseFS(webFiles, "pages/layout.tmpl", "pages/"+name+".tmpl")
		if err != nil {
			return nil, fmt.Errorf("web: page %s: %w", name, err)
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

func (h *Handler) render(c *echo.Context, status int, name string, data any) error {
	var b strings.Builder
	if err := h.pages[name].ExecuteTemplate(&b, name+".tmpl", data); err != nil {
		return fmt.Errorf("web: render %s: %w", name, err)
	}
	c.Response().Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'")
	return c.HTML(status, b.String())
}

func (h *Handler) pageBase(c *echo.Context, title string) page {
	csrf := h.d.CSRF(c)
	// A form's message: in a cookie, or, where the answer was already
	// on its way (an upload's progress), in the address, signed.
	msg := h.notes.of(c.QueryParams())
	if f := takeFlash(c); f != "" {
		msg = f
	}
	return page{Title: title, User: h.d.Caller(c).Name, CSRF: csrf, Message: msg}
}

// flashCookie carries what a form did to the page it leads to, so that
// the page's address holds only its view, never a message.
const flashCookie = "datadesk_flash"

// setFlash says msg on the next page the browser shows, within a minute.
func setFlash(c *echo.Context, msg string) {
	http.SetCookie(c.Response(), &http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), Path: "/", MaxAge: 60, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.Scheme() == "https"})
}

// takeFlash reads the message a form left and clears it.
func takeFlash(c *echo.Context) string {
	ck, err := c.Cookie(flashCookie)
	if err != nil || ck.Value == "" {
		return ""
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.Scheme() == "https"})
	msg, err := url.QueryUnescape(ck.Value)
	if err != nil {
		return ""
	}
	return msg
}

// pageError renders an error as a page, with the same status the API uses.
func (h *Handler) pageError(c *echo.Context, err error) error {
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
		h.d.Logger.Error("page failed", "path", c.Request().URL.Path, "err", err)
		text = "The server could not show this page. Try again later."
	}
	return h.render(c, status, "error", struct {
		page
		Heading, Text string
	}{h.pageBase(c, heading), heading, text})
}

func (h *Handler) SignInPage(c *echo.Context) error {
	msg := h.notes.of(c.QueryParams())
	return h.render(c, http.StatusOK, "signin", struct {
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

func (h *Handler) SignInForm(c *echo.Context) error {
	name, pw, next := c.FormValue("name"), c.FormValue("password"), safeNext(c.FormValue("next"))
	if _, _, err := h.d.StartSession(c, name, pw); err != nil {
		status, msg := http.StatusUnauthorized, "Wrong user name or password."
		switch datadesk.ErrorCode(err) {
		case datadesk.Unauthenticated:
		case datadesk.RateLimited:
			status, msg = http.StatusTooManyRequests, datadesk.AsError(err).Message
		default:
			return err
		}
		return h.render(c, status, "signin", struct {
			page
			Next string
		}{page{Title: "Sign in", Message: msg}, next})
	}
	return c.Redirect(http.StatusSeeOther, afterSignIn(c, next))
}

// afterSignIn is where a sign-in goes: next, but for a download (a
// table's export), which would leave the browser on the sign-in page, the
// table's page in the same view, saying where the export is.
func afterSignIn(c *echo.Context, next string) string {
	u, err := url.Parse(next)
	if err != nil || !strings.HasPrefix(u.Path, "/tables/") || !strings.HasSuffix(u.Path, "/export") {
		return next
	}
	q := u.Query()
	// The message names a format of the server's, never text from the
	// link.
	format := strings.ToUpper(q.Get("format"))
	if format != "XLSX" && format != "CSV" {
		format = "the file"
	}
	q.Del("format")
	setFlash(c, "You are signed in. Export "+format+" again from this page: the button is above the table.")
	if len(q) == 0 {
		return strings.TrimSuffix(u.Path, "/export")
	}
	return strings.TrimSuffix(u.Path, "/export") + "?" + q.Encode()
}

func (h *Handler) SignOutForm(c *echo.Context) error {
	if err := h.d.EndSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, h.notes.withNote("/signin", nil, "You are signed out."))
}

// approvalRow is a held call as the queue lists it: Target names the
// files it makes or reads, Why the rule that held it, in words.
type approvalRow struct {
	ID, Tool, UserName, ActorName, Target, Why, Status, Created, Expires string
	Rows, Bytes                                                          int64
}

// ApprovalsPage shows a page of the queue's summaries, never the calls'
// arguments, so it costs the same however big the calls are.
func (h *Handler) ApprovalsPage(c *echo.Context) error {
	list, f, more, err := h.d.ApprovalPage(c, 100)
	if err != nil {
		return h.pageError(c, err)
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
	pb := h.pageBase(c, "Approvals")
	if missing := h.d.Unanswered(c); len(missing) > 0 {
		pb.Message = "Nodes " + strings.Join(missing, ", ") + " did not answer in time: their waiting calls are not listed. Reload in a moment."
	}
	return h.render(c, http.StatusOK, "approvals", struct {
		page
		Approvals []approvalRow
		Approver  bool
		Next      string
	}{pb, rows, h.d.MayApprove(c), next})
}

// DecideApprovalForm approves or rejects from the page, through the same
// decision as the API.
func (h *Handler) DecideApprovalForm(approve bool) echo.HandlerFunc {
	return func(c *echo.Context) error {
		a, err := h.d.Decide(c, approve)
		if datadesk.ErrorCode(err) == datadesk.NotFound && h.d.FanOut(c) {
			a, err = h.d.DecideElsewhere(c, approve, err)
		}
		if err != nil {
			return h.pageError(c, err)
		}
		msg := "Rejected " + a.ID + "."
		switch {
		case a.Status == serverdb.ApprovalDenied:
			msg = "Not run: the policy now denies " + a.ID + " (" + a.ErrorMsg + ")."
		case approve:
			msg = "Approved " + a.ID + "."
		}
		return c.Redirect(http.StatusSeeOther, h.notes.withNote("/approvals", nil, msg))
	}
}
