package rest

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/rbac"
)

// ReadAudit lets admins read the audit log, newest first.
func (h *Handler) ReadAudit(c *echo.Context) error {
	if err := h.d.Authorize(c, rbac.ActionAudit); err != nil {
		return err
	}
	limit := 100
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return datadesk.Errorf(datadesk.Invalid, "limit must be a whole number from 1 to 10000").WithField("limit")
		}
		limit = n
	}
	entries, err := rbac.ReadAudit(h.d.DataDir, c.QueryParam("user"), limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"entries": entries})
}
