package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// approvalArg is one argument of a held call as an approver reads it: its
// name, its value in words, and for rows a preview.
type approvalArg struct {
	Name, Value string
	Preview     [][]string
	Columns     []string
}

// approvalDetail is what the approval page shows of one call.
type approvalDetail struct {
	approvalRow
	Caller, DecidedBy, DecidedAt string
	Args                         []approvalArg
	ArgsNote                     string
	Pending                      bool
}

// approvalPreviewRows is how many of a create's rows an approver sees.
const approvalPreviewRows = 5

// ApprovalDetailPage shows one held call as an approver judges it: the tool, the
// caller, the files and tables it touches by name, its arguments in
// readable form (rows and columns counted, the first rows of a create),
// the rule that held it, and when it expires or who decided it.
func (h *Handler) ApprovalDetailPage(c *echo.Context) error {
	a, err := h.d.VisibleApproval(c)
	if err != nil {
		return h.pageError(c, err)
	}
	ctx := c.Request().Context()
	d := approvalDetail{approvalRow: rowOf(a), Pending: a.Status == serverdb.ApprovalPending && h.d.MayApprove(c)}
	d.Caller = a.UserName
	if a.ActorName != "" {
		d.Caller += " (through " + a.ActorName + ")"
	}
	if a.DecidedBy != "" && a.DecidedAt != nil {
		d.DecidedBy, d.DecidedAt = a.DecidedBy, a.DecidedAt.Format("2006-01-02 15:04")
	}
	raw, err := h.d.System.ApprovalArguments(ctx, a)
	switch {
	case datadesk.ErrorCode(err) == datadesk.Conflict:
		d.ArgsNote = "The call's arguments are no longer kept: it was decided or expired."
	case err != nil:
		return h.pageError(c, err)
	default:
		d.Args = h.readableArgs(ctx, a, raw)
	}
	return h.render(c, http.StatusOK, "approval", struct {
		page
		Approval approvalDetail
	}{h.pageBase(c, "Approval "+a.ID), d})
}

func rowOf(a *serverdb.Approval) approvalRow {
	return approvalRow{ID: a.ID, Tool: a.Tool, UserName: a.UserName, ActorName: a.ActorName, Target: a.Target, Why: rbac.ReasonWords(a.Reason),
		Status: a.Status, Rows: a.Rows, Bytes: a.Bytes, Created: a.CreatedAt.Format("2006-01-02 15:04"),
		Expires: a.ExpiresAt.Format("2006-01-02 15:04")}
}

// readableArgs writes a call's arguments for a person: ids of the caller's
// files and tables with their names, rows counted with a preview, long
// text cut, the rest as compact JSON.
func (h *Handler) readableArgs(ctx context.Context, a *serverdb.Approval, raw json.RawMessage) []approvalArg {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return []approvalArg{{Name: "arguments", Value: cut(string(raw), 400)}}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []approvalArg
	for _, k := range keys {
		v := args[k]
		arg := approvalArg{Name: k}
		var text string
		var list []json.RawMessage
		switch {
		case json.Unmarshal(v, &text) == nil:
			arg.Value = cut(text, 400)
			if strings.HasSuffix(k, "file_id") || k == "table_id" {
				arg.Value = h.namedID(ctx, a.UserID, text)
			}
		case k == "rows" && json.Unmarshal(v, &list) == nil:
			arg.Value = fmt.Sprintf("%d rows", len(list))
			arg.Preview = previewOf(list)
		case k == "file_ids" && json.Unmarshal(v, &list) == nil:
			var names []string
			for _, id := range list {
				var one string
				if json.Unmarshal(id, &one) == nil {
					names = append(names, h.namedID(ctx, a.UserID, one))
				}
			}
			arg.Value = strings.Join(names, "; ")
		default:
			var b bytes.Buffer
			if json.Compact(&b, v) != nil {
				b.Reset()
				b.Write(v)
			}
			arg.Value = cut(b.String(), 400)
		}
		out = append(out, arg)
	}
	if cols, ok := args["columns"]; ok {
		var list []json.RawMessage
		if json.Unmarshal(cols, &list) == nil {
			for i := range out {
				if out[i].Name == "columns" {
					out[i].Value = fmt.Sprintf("%d columns: %s", len(list), out[i].Value)
				}
			}
		}
	}
	return out
}

// namedID is a file or table id of owner with its name, when the owner
// has it.
func (h *Handler) namedID(ctx context.Context, owner, id string) string {
	if !datadesk.ValidID(id) {
		return id
	}
	store, release, err := h.d.Engine.Acquire(ctx, owner)
	if err != nil {
		return id
	}
	defer release()
	if strings.HasPrefix(id, "t_") {
		if t, err := store.Table(ctx, id); err == nil {
			return fmt.Sprintf("table %s (%s, %d rows)", t.Name, id, t.RowCount)
		}
	} else if f, err := store.File(ctx, id); err == nil {
		return fmt.Sprintf("%s (%s)", f.Filename, id)
	}
	return id + " (not found)"
}

// previewOf is the first rows of a create as text cells.
func previewOf(rows []json.RawMessage) [][]string {
	var out [][]string
	for _, r := range rows[:min(len(rows), approvalPreviewRows)] {
		var cells []any
		var obj map[string]any
		var row []string
		switch {
		case json.Unmarshal(r, &cells) == nil:
			for _, c := range cells {
				row = append(row, cut(fmt.Sprint(c), 60))
			}
		case json.Unmarshal(r, &obj) == nil:
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				row = append(row, cut(k+": "+fmt.Sprint(obj[k]), 60))
			}
		default:
			row = []string{cut(string(r), 60)}
		}
		out = append(out, row)
	}
	return out
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
