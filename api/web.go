package api

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/rbac"
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
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) signOutForm(c *echo.Context) error {
	if err := s.endSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/signin?msg="+url.QueryEscape("You are signed out."))
}

type fileRow struct {
	Filename, ContentType, Created, DownloadURL string
	Size                                        int64
	Image                                       bool
	Tables                                      []tableSummary
}

func (s *Server) filesPage(c *echo.Context) error {
	if err := s.authorize(c, rbac.ActionRead); err != nil {
		return s.pageError(c, err)
	}
	store, release, err := s.store(c)
	if err != nil {
		return s.pageError(c, err)
	}
	defer release()
	session := c.QueryParam("session")
	all, err := store.Files(c.Request().Context(), "", 0)
	if err != nil {
		return s.pageError(c, err)
	}
	seen := map[string]bool{}
	var sessions []string
	var rows []fileRow
	for i := range all {
		f := &all[i]
		if f.ChatSession != "" && !seen[f.ChatSession] {
			seen[f.ChatSession] = true
			sessions = append(sessions, f.ChatSession)
		}
		if session != "" && f.ChatSession != session {
			continue
		}
		d := s.describe(caller(c).UserID, f)
		rows = append(rows, fileRow{Filename: f.Filename, ContentType: f.ContentType, Size: f.Size, Created: f.CreatedAt.Format("2006-01-02 15:04"),
			DownloadURL: d.DownloadURL, Image: strings.HasPrefix(f.ContentType, "image/"), Tables: d.Tables})
	}
	sort.Strings(sessions)
	return s.render(c, http.StatusOK, "files", struct {
		page
		Files    []fileRow
		Sessions []string
		Session  string
	}{s.pageBase(c, "Files"), rows, sessions, session})
}

type pageColumn struct {
	Key, Label, Type, Class, Op, Value, SortURL, Arrow, AriaSort string
	Identifier                                                   bool
}

type pageCell struct {
	Text, Class, Title string
}

func (s *Server) tablePage(c *echo.Context) error {
	if err := s.authorize(c, rbac.ActionRead); err != nil {
		return s.pageError(c, err)
	}
	id, err := idParam(c, "table")
	if err != nil {
		return s.pageError(c, err)
	}
	store, release, err := s.store(c)
	if err != nil {
		return s.pageError(c, err)
	}
	defer release()
	ctx := c.Request().Context()
	t, err := store.Table(ctx, id)
	if err != nil {
		return s.pageError(c, err)
	}
	q := c.Request().URL.Query()
	req := engine.PageRequest{Limit: webPageSize, Sort: q.Get("sort"), Direction: q.Get("dir")}
	req.Offset, _ = strconv.ParseInt(q.Get("offset"), 10, 64)
	req.Offset = max(req.Offset, 0)
	cols := make([]pageColumn, len(t.Columns))
	for i, col := range t.Columns {
		pc := pageColumn{Key: col.Key, Label: col.Label, Type: col.Type, Identifier: col.Identifier, Class: "text", Op: q.Get("o." + col.Key), Value: q.Get("f." + col.Key)}
		if engine.Numeric(col.Type) {
			pc.Class = "num"
		}
		if pc.Label == "" {
			pc.Label = col.Key
		}
		if pc.Op == "" {
			pc.Op = "contains"
		}
		if pc.Value != "" || pc.Op == "is_null" && q.Has("f."+col.Key) {
			req.Filters = append(req.Filters, pageFilter(col, pc.Op, pc.Value))
		}
		cols[i] = pc
	}
	p, err := store.Rows(ctx, id, req)
	if err != nil {
		return s.pageError(c, err)
	}
	// Links keep the filters and sort; paging changes only the offset.
	link := func(mod func(url.Values)) string {
		v := url.Values{}
		for k, vals := range q {
			v[k] = vals
		}
		mod(v)
		return "/tables/" + t.ID + "?" + v.Encode()
	}
	for i := range cols {
		dir, arrow, aria := "asc", "", "none"
		if req.Sort == cols[i].Key {
			if p.Direction == "asc" {
				dir, arrow, aria = "desc", " ▲", "ascending"
			} else {
				arrow, aria = " ▼", "descending"
			}
		}
		key := cols[i].Key
		cols[i].SortURL = link(func(v url.Values) { v.Set("sort", key); v.Set("dir", dir); v.Del("offset") })
		cols[i].Arrow, cols[i].AriaSort = arrow, aria
	}
	rows := make([][]pageCell, len(p.Rows))
	for i, r := range p.Rows {
		rows[i] = make([]pageCell, len(r))
		for j, v := range r {
			rows[i][j] = cellOf(v, cols[j].Class)
		}
	}
	pages := max(int64(math.Ceil(float64(p.Total)/webPageSize)), 1)
	lastOffset := (pages - 1) * webPageSize
	at := func(off int64) string {
		return link(func(v url.Values) { v.Set("offset", strconv.FormatInt(max(off, 0), 10)) })
	}
	labels, err := store.Labels(ctx, t.ID)
	if err != nil {
		return s.pageError(c, err)
	}
	data := struct {
		page
		Table                               *engine.Table
		Columns                             []pageColumn
		Rows                                [][]pageCell
		Ops                                 []string
		Total, From, To, Page, Pages        int64
		Filtered                            bool
		Sort, Dir                           string
		FirstURL, PrevURL, NextURL, LastURL string
		Labels                              *engine.Labels
		LabelsTime                          string
		Chart                               template.HTML
		ChartLabel, ChartValue              string
	}{
		page: s.pageBase(c, t.Name), Table: t, Columns: cols, Rows: rows, Ops: filterOps,
		Total: p.Total, From: min(req.Offset+1, p.Total), To: req.Offset + int64(len(p.Rows)), Page: req.Offset/webPageSize + 1, Pages: pages,
		Filtered: len(req.Filters) > 0, Sort: req.Sort, Dir: p.Direction,
		FirstURL: at(0), PrevURL: at(req.Offset - webPageSize), NextURL: at(min(req.Offset+webPageSize, lastOffset)), LastURL: at(lastOffset),
		Labels: labels,
	}
	if labels != nil {
		data.LabelsTime = labels.UpdatedAt.Format("2006-01-02 15:04")
	}
	data.Chart, data.ChartLabel, data.ChartValue = barChart(t, p)
	return s.render(c, http.StatusOK, "table", data)
}

// pageFilter reads a filter form field as query_table would: in takes a
// comma-separated list, is_null true or false.
func pageFilter(col engine.Column, op, value string) engine.Filter {
	f := engine.Filter{Column: col.Key, Op: op, Value: value}
	switch op {
	case "in":
		var list []any
		for _, v := range strings.Split(value, ",") {
			list = append(list, strings.TrimSpace(v))
		}
		f.Value = list
	case "is_null":
		f.Value = value != "false"
	}
	return f
}

// cellOf shows a value: an empty cell (NULL) differs from empty text.
func cellOf(v any, class string) pageCell {
	switch x := v.(type) {
	case nil:
		return pageCell{Text: "∅", Class: "null", Title: "empty cell (null)"}
	case string:
		if x == "" {
			return pageCell{Class: class, Title: "empty text"}
		}
		return pageCell{Text: x, Class: class}
	case json.Number:
		return pageCell{Text: x.String(), Class: class}
	case float64:
		return pageCell{Text: strconv.FormatFloat(x, 'f', -1, 64), Class: class}
	}
	return pageCell{Text: fmt.Sprint(v), Class: class}
}

// barChart draws a grouped view's first numeric aggregate by its first group
// column, for the rows on the page, as a server-rendered SVG.
func barChart(t *engine.Table, p *engine.Page) (template.HTML, string, string) {
	if t.SourceTableID == "" || !strings.Contains(t.Query, `"group_by"`) || len(p.Rows) == 0 {
		return "", "", ""
	}
	var q engine.Query
	if json.Unmarshal([]byte(t.Query), &q) != nil || len(q.GroupBy) == 0 {
		return "", "", ""
	}
	labelIdx, valueIdx := 0, -1
	for i := len(q.GroupBy); i < len(t.Columns); i++ {
		if engine.Numeric(t.Columns[i].Type) {
			valueIdx = i
			break
		}
	}
	if valueIdx < 0 {
		return "", "", ""
	}
	type bar struct {
		label string
		value float64
		null  bool
	}
	var bars []bar
	top := 0.0
	for _, r := range p.Rows {
		var v float64
		null := r[valueIdx] == nil
		switch x := r[valueIdx].(type) {
		case int64:
			v = float64(x)
		case float64:
			v = x
		case json.Number:
			v, _ = x.Float64()
		}
		bars = append(bars, bar{label: cellOf(r[labelIdx], "").Text, value: v, null: null})
		top = math.Max(top, math.Abs(v))
	}
	const width, rowH, labelW = 600.0, 22.0, 160.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img">`, width, rowH*float64(len(bars))+4)
	for i, br := range bars {
		w := 0.0
		if top > 0 {
			w = (width - labelW - 90) * math.Abs(br.value) / top
		}
		y := float64(i)*rowH + 2
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end" font-size="12">%s</text>`, labelW-6, y+15, template.HTMLEscapeString(br.label))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="%.0f" fill="#0969da"><title>%s: %s</title></rect>`,
			labelW, y+3, w, rowH-6, template.HTMLEscapeString(br.label), strconv.FormatFloat(br.value, 'f', -1, 64))
		shown := strconv.FormatFloat(br.value, 'f', -1, 64)
		if br.null {
			shown = "∅ no value"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="12">%s</text>`, labelW+w+4, y+15, shown)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), t.Columns[labelIdx].Key, t.Columns[valueIdx].Key
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
	for i, a := range list {
		rows[i] = approvalRow{ID: a.ID, Tool: a.Tool, UserName: a.UserName, ActorName: a.ActorName, Reason: a.Reason,
			Status: a.Status, Rows: a.Rows, Bytes: a.Bytes, Created: a.CreatedAt.Format("2006-01-02 15:04"),
			Expires: a.ExpiresAt.Format("2006-01-02 15:04")}
	}
	next := ""
	if more {
		q := url.Values{"offset": {strconv.Itoa(f.Offset + len(list))}}
		if f.Status != "" {
			q.Set("status", f.Status)
		}
		next = "/approvals?" + q.Encode()
	}
	return s.render(c, http.StatusOK, "approvals", struct {
		page
		Approvals []approvalRow
		Approver  bool
		Next      string
	}{s.pageBase(c, "Approvals"), rows, s.mayApprove(c), next})
}

// decideApprovalForm approves or rejects from the page, through the same
// decision as the API.
func (s *Server) decideApprovalForm(approve bool) echo.HandlerFunc {
	return func(c *echo.Context) error {
		a, err := s.decide(c, approve)
		if err != nil {
			return s.pageError(c, err)
		}
		msg := "Rejected " + a.ID + "."
		switch {
		case a.Status == engine.ApprovalDenied:
			msg = "Not run: the policy now denies " + a.ID + " (" + a.ErrorMsg + ")."
		case approve:
			msg = "Approved " + a.ID + "."
		}
		return c.Redirect(http.StatusSeeOther, "/approvals?msg="+url.QueryEscape(msg))
	}
}
