package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v5"

	"datadesk"
)

// errorBody is an error as a client is told it.
type errorBody = datadesk.Public

// handleError writes every error as {"error": {...}}. Only internal errors
// are logged, and their causes never reach the client.
func (s *Server) handleError(c *echo.Context, err error) {
	if r, _ := echo.UnwrapResponse(c.Response()); r != nil && r.Committed {
		return
	}
	var body errorBody
	status, code := errorStatus(err)
	if code != datadesk.ErrorCode(err) {
		// Echo's own errors: unknown route, wrong method.
		body = errorBody{Code: code, Message: http.StatusText(status)}
	} else {
		body = datadesk.PublicOf(err)
		switch body.Code {
		case datadesk.Internal:
			s.cfg.Logger.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		case datadesk.Unavailable:
			s.cfg.Logger.Warn("a dependency is down", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		}
	}
	// Every 429 and 503 says when to try again: in a second, unless the
	// path that refused knows better and set its own.
	retry := status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests
	if h := c.Response().Header(); retry && h.Get("Retry-After") == "" {
		h.Set("Retry-After", "1")
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, map[string]errorBody{"error": body})
}

// errorStatus is the status and code the client gets for err: the one
// answer both the error handler and the audit use.
func errorStatus(err error) (int, datadesk.Code) {
	var he echo.HTTPStatusCoder
	if errors.As(err, &he) && !errors.As(err, new(*datadesk.Error)) {
		return he.StatusCode(), codeOfStatus(he.StatusCode())
	}
	code := datadesk.ErrorCode(err)
	return code.Status(), code
}

func codeOfStatus(status int) datadesk.Code {
	if status == http.StatusMethodNotAllowed {
		return datadesk.Invalid
	}
	return datadesk.CodeOfStatus(status)
}
