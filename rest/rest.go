// Package rest is datadesk's JSON API under /v1: files and their uploads,
// tables, their rows, labels and exports, declared tables, the tool list
// and tool calls (through the pipeline, toolcall), approvals and the
// audit log. Its handlers bind, validate, authorise, call the domain and
// encode; the server lends it the caller, the policy, the owner's store and
// the shared paths (surface.Services) and wires its routes.
package rest

import (
	"github.com/labstack/echo/v5"

	"datadesk/surface"
	"datadesk/toolcall"
)

// Deps are what the handlers use.
type Deps struct {
	surface.Services
	Calls *toolcall.Pipeline
	// OffloadProviders are the tool providers whose big declared tables
	// are stored rather than passed to the model.
	OffloadProviders []string
	// DataDir is the data directory, where the audit log is read from.
	DataDir string
	// ApprovalElsewhere answers a request for an approval this node does
	// not hold from the node that does.
	ApprovalElsewhere func(c *echo.Context, notFound error) error
	// Action names the request in its audit entry; Recorded marks a
	// request whose entry the pipeline wrote.
	Action   func(c *echo.Context, name string)
	Recorded func(c *echo.Context)
}

// Handler serves the JSON API.
type Handler struct {
	d Deps
}

// NewHandler returns the JSON API's handlers over d.
func NewHandler(d Deps) *Handler { return &Handler{d: d} }
