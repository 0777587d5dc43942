package toolcall

import (
	"context"
	"strings"

	"datadesk"

	"datadesk/engine/catalog"
	"datadesk/rbac"
)

// filesQueryTable is files.query_table: a query of an owned table, planned
// against the caller's catalog and run on the server.
type filesQueryTable struct{}

func (filesQueryTable) spec() Tool {
	return Tool{Name: "files.query_table",
		Description: "Query an owned stored table entirely on the server. Returns counts and aggregates; limit=0 (default) sends NO rows to the model, " +
			"up to 20 for details. Use exact column keys, filters are AND/case-insensitive. Identifiers stay text. sum/avg/min/max require numeric cells. " +
			"group_by groups server-side. show=true displays the complete resulting view in chat, regardless of preview limit. " +
			"Zero-row results return counts without an empty table/file. Use show=false while refining filters and show=true for the final view. " +
			"Derived views require files.create; reading/showing the original requires files.read. Reuse file_id returned by any module's table result. " +
			"No source-system query or LLM call. For time buckets, distinct counts, medians, percentiles, shares, the latest date (max of a date), " +
			"prefix or OR filters, use files.analyze_table.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true}
}

func (filesQueryTable) run(p *Pipeline, call *toolCall, args *Arguments) (any, error) {
	return p.toolFilesQueryTable(call, args)
}

// analyzeTakes says what files.analyze_table takes beyond files.query_table's
// ops, for a query_table call refused for an op.
var analyzeTakes = map[string]string{
	"aggregates": "files.analyze_table's measures also take count_distinct, median, percentile, stddev and share, and min and max of dates and text",
	"filters":    "files.analyze_table's filters also take not_in, starts_with, ends_with, between, is_blank and OR groups (any)",
}

// reword points a call refused for an op it does not take to
// files.analyze_table, which takes more.
func (filesQueryTable) reword(e *datadesk.Error) error {
	arg, _, _ := strings.Cut(e.Field, "[")
	if hint, ok := analyzeTakes[arg]; ok && strings.HasSuffix(e.Field, ".op") {
		return &datadesk.Error{Code: e.Code, Message: e.Message + "; " + hint, Field: e.Field, Allowed: e.Allowed, Err: e.Err}
	}
	return e
}

func (filesQueryTable) summaryKeys() []string {
	return []string{"source_row_count", "matched_row_count", "group_count"}
}

func (filesQueryTable) text(r map[string]any, budget int) string { return answerText(r, budget) }

// toolFilesQueryTable runs files.query_table: plan against the caller's
// catalog, one statement under the query timeout, and for show=true a view.
func (p *Pipeline) toolFilesQueryTable(call *toolCall, args *Arguments) (any, error) {
	var q catalog.Query
	if err := args.bind(&q); err != nil {
		return nil, err
	}
	store := call.store
	ctx, cancel := context.WithTimeout(call.ctx, p.cfg.QueryTimeout)
	defer cancel()
	plan, err := store.Plan(ctx, q)
	if err != nil {
		return nil, fileIDError(ctx, store, "file_id", q.FileID, err)
	}
	notes, err := store.CheckTextUses(ctx, plan.TextUses())
	if err != nil {
		return nil, err
	}
	res, err := store.Run(ctx, plan)
	if err != nil {
		return nil, err
	}
	res.Notes = append(notes, res.Notes...)
	res.Notes = append(res.Notes, tableNotes(ctx, store, q.FileID, plan.Table)...)
	// The plan stays inspectable in the log; the model does not need it.
	p.cfg.Logger.Debug("files.query_table", "user", call.caller.UserID, "table", res.TableID, "sql", res.SQL)
	if q.Show {
		// A derived view is a new file of the caller's, as big as the rows
		// it matched (or its groups); showing the original only reads.
		action, rows := rbac.ActionRead, res.SourceRowCount
		if plan.Derived() {
			action, rows = rbac.ActionCreate, res.MatchedRowCount
			if res.GroupCount != nil {
				rows = *res.GroupCount
			}
		}
		attrs := rbac.Attrs{Tool: "files.query_table", Show: true, Derived: plan.Derived(), Rows: int(rows), Columns: len(res.Columns)}
		if err := call.authorize(p, action, attrs); err != nil {
			return nil, err
		}
		view, err := store.Show(ctx, plan, res)
		if err != nil {
			return nil, err
		}
		if view != nil {
			view.PreviewURL = PreviewURL(view.TableID)
		}
		res.View = view
	}
	return res, nil
}
