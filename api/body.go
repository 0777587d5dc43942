package api

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"

	"github.com/labstack/echo/v5"

	"datadesk/toolcall"
)

// maxJSONBody bounds small JSON request bodies such as sign-in.
const maxJSONBody = 64 << 10

// spool keeps a tool call's body (toolcall.Spool). A body that may pass
// toolcall.BodyInMemory first takes one of the node's and the caller's turns for
// large bodies, held until it is closed, and every body is dropped once
// it sends nothing for bodyIdle.
func (s *Server) spool(c *echo.Context, user string) (*toolcall.Body, error) {
	r := c.Request()
	var release func()
	if r.ContentLength < 0 || r.ContentLength > toolcall.BodyInMemory {
		var err error
		if release, err = s.bodies.enter(r.Context(), user); err != nil {
			return nil, err
		}
	}
	body, err := toolcall.Spool(s.newIdleBody(c.Response(), r.Body), r.ContentLength, toolcall.MaxBody, s.spoolDir())
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	body.OnClose(release)
	return body, nil
}

// decodeJSON reads one JSON object into dst, refusing unknown keys.
// Errors: invalid, naming the key and the shape it takes.
func decodeJSON(body io.Reader, dst any) error {
	dec := json.NewDecoder(io.LimitReader(body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return toolcall.DecodeError(err, dst, "the body")
	}
	return nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// spoolDir is where request bodies too large to hold are kept while their
// calls run.
func (s *Server) spoolDir() string { return filepath.Join(s.engine.Dir(), "spool") }
