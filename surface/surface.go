// Package surface is what the server lends each of its surfaces (the REST
// handlers, the web page): the caller, the policy's decisions, the owner's
// store, the one upload path, the one export stream and the approvals'
// decisions, each a function the server wires, so that no surface imports
// the server or another surface.
package surface

import (
	"context"
	"io"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/links"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// Services are the server's functions a surface calls.
type Services struct {
	// MaxUpload bounds an upload's bytes; Links signs the download links
	// of the files a page or an answer lists.
	MaxUpload int64
	Links     links.Signer
	// Caller is the request's authenticated caller.
	Caller func(*echo.Context) datadesk.Caller
	// Authorize asks the policy for an action, recording the decision for
	// the audit; AuthorizeWith does with the work's attributes. OwnStore
	// also reads the :id parameter and acquires the caller's store, Store
	// acquires it alone.
	Authorize     func(c *echo.Context, action string) error
	AuthorizeWith func(c *echo.Context, action string, attrs rbac.Attrs) error
	OwnStore      func(c *echo.Context, action, what string) (*engine.Store, string, func(), error)
	Store         func(c *echo.Context) (*engine.Store, func(), error)
	// Upload is every upload's one path: received, ingested, stored, and
	// decided again by the policy on what the file holds. UploadBody bounds
	// a request's body, EnterBody takes the caller's turn for a large one;
	// UploadTooLarge and UploadError say what went wrong receiving one.
	Upload func(c *echo.Context, store *engine.Store, name string, body io.Reader, opts ingest.Options) (*catalog.File, error)
	// ReadAgain reads a stored file again (by id) with a person's
	// corrections into a new file, by the same path, sharing its bytes.
	ReadAgain      func(c *echo.Context, store *engine.Store, id string, opts ingest.Options) (*catalog.File, error)
	UploadBody     func(c *echo.Context, limit int64) io.ReadCloser
	UploadTooLarge func() error
	UploadError    func(err error) error
	EnterBody      func(ctx context.Context, user string) (func(), error)
	// StreamExport sends an export file, rows as they are read.
	StreamExport func(c *echo.Context, format, name string, src exports.Source, opts exports.Options) error
	// The approvals: a page of the queue, one the caller may see, the
	// decision, whether the request should ask the other nodes (FanOut),
	// whether the caller approves, and the nodes that did not answer a
	// list.
	ApprovalPage    func(c *echo.Context, defaultLimit int) ([]serverdb.Approval, serverdb.ApprovalFilter, bool, error)
	VisibleApproval func(c *echo.Context) (*serverdb.Approval, error)
	Decide          func(c *echo.Context, approve bool) (*serverdb.Approval, error)
	FanOut          func(c *echo.Context) bool
	MayApprove      func(c *echo.Context) bool
	Unanswered      func(c *echo.Context) []string
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
