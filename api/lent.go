package api

import (
	"context"
	"io"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/serverdb"
	"datadesk/surface"
	"datadesk/toolcall"
)

// lent is the server as its surfaces see it: the small interfaces of
// package surface, each method the server's own.
type lent struct{ s *Server }

var (
	_ surface.Access    = lent{}
	_ surface.Turns     = lent{}
	_ surface.Uploads   = lent{}
	_ surface.Exports   = lent{}
	_ surface.Approvals = lent{}
)

func (l lent) Caller(c *echo.Context) datadesk.Caller { return caller(c) }

func (l lent) Authorize(c *echo.Context, action string) error { return l.s.authorize(c, action) }

func (l lent) AuthorizeWith(c *echo.Context, action string, attrs rbac.Attrs) error {
	return l.s.authorizeWith(c, action, attrs)
}

func (l lent) OwnStore(c *echo.Context, action, what string) (*engine.Store, string, func(), error) {
	return l.s.ownStore(c, action, what)
}

func (l lent) Store(c *echo.Context) (*engine.Store, func(), error) { return l.s.store(c) }

func (l lent) Spool(c *echo.Context, user string) (*toolcall.Body, error) { return l.s.spool(c, user) }

func (l lent) EnterRead(ctx context.Context, user string) (func(), error) {
	return l.s.reads.enter(ctx, user)
}

func (l lent) Upload(c *echo.Context, store *engine.Store, name string, body io.Reader, opts ingest.Options) (*catalog.File, error) {
	return l.s.storeUpload(c, store, name, body, opts)
}

func (l lent) ReadAgain(c *echo.Context, store *engine.Store, id string, opts ingest.Options) (*catalog.File, error) {
	return l.s.readAgain(c, store, id, opts)
}

func (l lent) UploadBody(c *echo.Context, limit int64) io.ReadCloser { return l.s.uploadBody(c, limit) }

func (l lent) EnterBody(ctx context.Context, user string) (func(), error) {
	return l.s.bodies.enter(ctx, user)
}

func (l lent) UploadTooLarge() error { return errTooLarge(l.s.cfg.MaxUpload) }

func (l lent) UploadError(err error) error { return bodyError(err, l.s.cfg.MaxUpload) }

func (l lent) StreamExport(c *echo.Context, format, name string, src exports.Source, opts exports.Options) error {
	return l.s.streamExport(c, format, name, src, opts)
}

func (l lent) ApprovalPage(c *echo.Context, defaultLimit int) ([]serverdb.Approval, serverdb.ApprovalFilter, bool, error) {
	return l.s.approvalPage(c, defaultLimit)
}

func (l lent) VisibleApproval(c *echo.Context) (*serverdb.Approval, error) {
	return l.s.visibleApproval(c)
}

func (l lent) Decide(c *echo.Context, approve bool) (*serverdb.Approval, error) {
	return l.s.decide(c, approve)
}

func (l lent) FanOut(c *echo.Context) bool { return l.s.fanOut(c) }

func (l lent) MayApprove(c *echo.Context) bool { return l.s.mayApprove(c) }

func (l lent) Unanswered(c *echo.Context) []string { return unanswered(c) }
