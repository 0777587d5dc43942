// Package surface is what the server lends each of its surfaces (the REST
// handlers, MCP, the web page): the caller and the policy's decisions over
// the owner's store (Access), the node's turns for large bodies and reads
// of rows (Turns), the one upload path (Uploads), the one export stream
// (Exports) and the approvals' decisions (Approvals), each a small
// interface the server implements, so that no surface imports the server
// or another surface.
package surface

import (
	"context"
	"io"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/links"
	"datadesk/rbac"
	"datadesk/serverdb"
	"datadesk/toolcall"
)

// Access is who calls and what the policy lets them do.
type Access interface {
	// Caller is the request's authenticated caller.
	Caller(c *echo.Context) datadesk.Caller
	// Authorize asks the policy for an action, recording the decision
	// for the audit; AuthorizeWith does with the work's attributes.
	// Errors: forbidden, needs_approval.
	Authorize(c *echo.Context, action string) error
	AuthorizeWith(c *echo.Context, action string, attrs rbac.Attrs) error
	// OwnStore authorizes action, reads the :id parameter (what names it
	// in errors) and acquires the caller's store; Store acquires it alone.
	OwnStore(c *echo.Context, action, what string) (*engine.Store, string, func(), error)
	Store(c *echo.Context) (*engine.Store, func(), error)
}

// Turns are the node's and each caller's turns for work that holds much.
type Turns interface {
	// Spool keeps a tool call's body, taking one of the turns for large
	// bodies when it may be large, held until the body is closed.
	Spool(c *echo.Context, user string) (*toolcall.Body, error)
	// EnterRead takes a turn to read rows; the function returned gives
	// it back. Errors: unavailable when the turns are all taken.
	EnterRead(ctx context.Context, user string) (func(), error)
}

// Uploads is every upload's one path: received, ingested, stored, and
// decided again by the policy on what the file holds.
type Uploads interface {
	Upload(c *echo.Context, store *engine.Store, name string, body io.Reader, opts ingest.Options) (*catalog.File, error)
	// ReadAgain reads a stored file again (by id) with a person's
	// corrections into a new file, by the same path, sharing its bytes.
	ReadAgain(c *echo.Context, store *engine.Store, id string, opts ingest.Options) (*catalog.File, error)
	// UploadBody bounds a request's body, EnterBody takes the caller's
	// turn for a large one; UploadTooLarge and UploadError say what went
	// wrong receiving one.
	UploadBody(c *echo.Context, limit int64) io.ReadCloser
	EnterBody(ctx context.Context, user string) (func(), error)
	UploadTooLarge() error
	UploadError(err error) error
}

// Exports sends export files.
type Exports interface {
	// StreamExport sends an export file, rows as they are read.
	StreamExport(c *echo.Context, format, name string, src exports.Source, opts exports.Options) error
}

// Approvals are the calls waiting for a person: a page of the queue, one
// the caller may see, the decision, whether the request should ask the
// other nodes (FanOut), whether the caller approves, and the nodes that
// did not answer a list.
type Approvals interface {
	ApprovalPage(c *echo.Context, defaultLimit int) ([]serverdb.Approval, serverdb.ApprovalFilter, bool, error)
	VisibleApproval(c *echo.Context) (*serverdb.Approval, error)
	Decide(c *echo.Context, approve bool) (*serverdb.Approval, error)
	FanOut(c *echo.Context) bool
	MayApprove(c *echo.Context) bool
	Unanswered(c *echo.Context) []string
}

// Services are what the server lends a surface.
type Services struct {
	// MaxUpload bounds an upload's bytes; Links signs the download links
	// of the files a page or an answer lists; Now is the server's clock.
	MaxUpload int64
	Links     links.Signer
	Now       func() time.Time
	Access
	Turns
	Uploads
	Exports
	Approvals
}

// OwnTable acquires the caller's store for action, as OwnStore does, and
// reads the table the :id parameter names. The release is nil on error.
func (s Services) OwnTable(c *echo.Context, action string) (*engine.Store, *catalog.Table, func(), error) {
	store, id, release, err := s.OwnStore(c, action, "table")
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := store.Table(c.Request().Context(), id)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return store, t, release, nil
}
