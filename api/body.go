package api

import (
	"path/filepath"

	"github.com/labstack/echo/v5"

	"datadesk/toolcall"
)

// spool keeps a tool call's body (toolcall.Spool). A body that may pass
// toolcall.BodyInMemory first takes one of the node's and the caller's turns for
// large bodies, held until it is closed, and every body is dropped once
// it sends nothing for bodyIdle or falls behind bodyMinRate.
func (s *Server) spool(c *echo.Context, user string) (*toolcall.Body, error) {
	r := c.Request()
	var release func()
	if r.ContentLength < 0 || r.ContentLength > toolcall.BodyInMemory {
		var err error
		if release, err = s.bodies.enter(r.Context(), user); err != nil {
			return nil, err
		}
	}
	body, err := toolcall.Spool(s.newPacedBody(c.Response(), r.Body), r.ContentLength, toolcall.MaxBody, s.spoolDir())
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	body.OnClose(release)
	return body, nil
}

// spoolDir is where request bodies too large to hold are kept while their
// calls run.
func (s *Server) spoolDir() string { return filepath.Join(s.engine.Dir(), "spool") }
