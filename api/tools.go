package api

import (
	"net/http"

	"datadesk/toolcall"

	"github.com/labstack/echo/v5"
)

func (s *Server) listTools(c *echo.Context) error {
	if format := c.QueryParam("format"); format != "" {
		return s.listToolsAs(c, format)
	}
	return c.JSON(http.StatusOK, map[string]any{"tools": s.calls.Tools()})
}

// callTool is the HTTP path of a tool call: find the tool by either
// spelling of its name, keep the body and hand it to the pipeline, which
// reads the arguments from it and records the call.
func (s *Server) callTool(c *echo.Context) error {
	began := s.cfg.Now()
	t, err := s.calls.Lookup(c.Param("name"))
	if err != nil {
		return err
	}
	c.Set(actionKey, t.Name)
	body, err := s.spool(c, caller(c).UserID)
	if err != nil {
		return err
	}
	defer body.Close()
	out := s.calls.Invoke(c.Request().Context(), toolcall.Call{Who: caller(c), Tool: t, Began: began,
		Arguments: func() (map[string]any, error) { return toolcall.DecodeArguments(body.SectionReader) }})
	// The pipeline wrote the call's record.
	c.Set(auditedKey, true)
	if out.Err != nil {
		return out.Err
	}
	if out.Approval != nil {
		return c.JSON(http.StatusAccepted, map[string]any{"approval": toolcall.ApprovalAnswer(out.Approval)})
	}
	return c.JSONBlob(http.StatusOK, append(append([]byte(`{"result":`), out.Raw...), '}'))
}
