package rest

import (
	"net/http"

	"datadesk/toolcall"

	"github.com/labstack/echo/v5"
)

// ListTools lists the registered tools, or, with format, as one provider
// takes them.
func (h *Handler) ListTools(c *echo.Context) error {
	if format := c.QueryParam("format"); format != "" {
		return h.listToolsAs(c, format)
	}
	return c.JSON(http.StatusOK, map[string]any{"tools": h.d.Calls.Tools()})
}

// CallTool is the HTTP path of a tool call: find the tool by either
// spelling of its name, keep the body and hand it to the pipeline, which
// reads the arguments from it and records the call.
func (h *Handler) CallTool(c *echo.Context) error {
	began := h.d.Now()
	t, err := h.d.Calls.Lookup(c.Param("name"))
	if err != nil {
		return err
	}
	h.d.Action(c, t.Name)
	body, err := h.d.Spool(c, h.d.Caller(c).UserID)
	if err != nil {
		return err
	}
	defer body.Close()
	out := h.d.Calls.Invoke(c.Request().Context(), toolcall.Call{Who: h.d.Caller(c), Tool: t, Began: began,
		Arguments: func() (*toolcall.Arguments, error) { return toolcall.DecodeArguments(body.SectionReader) }})
	// The pipeline wrote the call's record.
	h.d.Recorded(c)
	if out.Err != nil {
		return out.Err
	}
	if out.Approval != nil {
		return c.JSON(http.StatusAccepted, map[string]any{"approval": toolcall.ApprovalAnswer(out.Approval)})
	}
	return c.JSONBlob(http.StatusOK, append(append([]byte(`{"result":`), out.Raw...), '}'))
}
