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
// spelling of its name, decode the arguments and hand them to invoke.
func (s *Server) callTool(c *echo.Context) error {
	t, err := s.calls.Lookup(c.Param("name"))
	if err != nil {
		return err
	}
	body, err := s.spool(c, caller(c).UserID)
	if err != nil {
		return err
	}
	defer body.Close()
	args, err := toolcall.DecodeArguments(body.SectionReader)
	if err != nil {
		return err
	}
	c.Set(actionKey, t.Name)
	// The audit records the arguments' hash, taken while the body is open.
	c.Set(argsHashKey, toolcall.ArgsHash(args))
	out := s.calls.Invoke(c.Request().Context(), caller(c), t, args)
	if out.Decided {
		c.Set(decisionKey, out.Decision)
	}
	if out.Err != nil {
		return out.Err
	}
	if out.Approval != nil {
		c.Set(approvalKey, out.Approval.ID)
		return c.JSON(http.StatusAccepted, map[string]any{"approval": toolcall.ApprovalAnswer(out.Approval)})
	}
	return c.JSONBlob(http.StatusOK, append(append([]byte(`{"result":`), out.Raw...), '}'))
}
