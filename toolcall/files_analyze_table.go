package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/ingest"
	"datadesk/rbac"
)

// The offload bounds the tool's description states: an answer of more groups, or of more
// characters as compact JSON, is stored as a table.
const (
	analysisInlineRows  = 50
	analysisInlineChars = 12000
)

// filesAnalyzeTable is files.analyze_table: what files.query_table cannot
// answer of an owned table, planned against the caller's catalog and run
// on the server.
type filesAnalyzeTable struct{}

func (filesAnalyzeTable) spec() Tool {
	return Tool{Name: "files.analyze_table",
		Description: "Answer in one call, on the server, what files.query_table cannot about an owned table: time buckets, measures such as " +
			"distinct counts, medians, shares, ratios, change and rank, having, top N per group, OR filters, a lookup into another table; " +
			"or read a file again naming its header rows (reading). Returns counts and up to 50 groups; more, or show=true, stores the " +
			"result as a table. Notes say how ties and windows ran.",
		RiskLevel: RiskRead, ApprovalMode: rbac.ApprovalNever, Enabled: true}
}

func (filesAnalyzeTable) run(p *Pipeline, call *toolCall, args *Arguments) (any, error) {
	return p.toolFilesAnalyzeTable(call, args)
}

// workAttrs are an analysis's attributes: it derives, and scans its
// table's rows and its lookup table's.
func (filesAnalyzeTable) workAttrs(ctx context.Context, open func() (*engine.Store, error), _ *ingest.Ingester, args *Arguments, a rbac.Attrs) (rbac.Attrs, error) {
	store, err := open()
	if err != nil {
		return a, err
	}
	return analysisAttrs(ctx, store, args.values, a)
}

// analysisAttrs are an analysis's attributes: the rows it scans, its
// table's and its lookup table's. Ids that are not the owner's add
// nothing; the call then answers not found.
func analysisAttrs(ctx context.Context, store *engine.Store, args map[string]any, a rbac.Attrs) (rbac.Attrs, error) {
	ids := []string{}
	if id, ok := args["file_id"].(string); ok {
		ids = append(ids, id)
	}
	if l, ok := args["lookup"].(map[string]any); ok {
		if id, ok := l["file_id"].(string); ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		tbl, err := store.Table(ctx, id)
		switch {
		case err == nil:
			a.Rows += int(tbl.RowCount)
		case !datadesk.IsNotFound(err):
			return a, err
		}
	}
	a.Derived = true
	return a, nil
}

func (filesAnalyzeTable) summaryKeys() []string {
	return []string{"source_row_count", "matched_row_count", "group_count"}
}

func (filesAnalyzeTable) text(r map[string]any, budget int) string { return answerText(r, budget) }

// toolFilesAnalyzeTable runs files.analyze_table: plan against the
// caller's catalog, one statement under the query timeout, and the whole
// result stored as a table when show is set or the page is past the
// offload bounds.
func (p *Pipeline) toolFilesAnalyzeTable(call *toolCall, args *Arguments) (any, error) {
	var a catalog.Analysis
	if err := args.bind(&a); err != nil {
		return nil, err
	}
	reading, err := readingOf(args)
	if err != nil {
		return nil, err
	}
	var again *readAgainAnswer
	if reading != nil {
		// Read first, bounded as an upload is, not by the query's time.
		nf, t, err := p.readAgain(call.ctx, call, a.FileID, *reading)
		if err != nil {
			return nil, err
		}
		a.FileID = t.ID
		again = &readAgainAnswer{File: Describe(p.cfg.Links, call.caller.UserID, nf), TableID: t.ID, note: readingNote(nf, t)}
	}
	// The timeout covers the whole call: the checks, the lookup's and the
	// table's statements, and storing a result.
	ctx, cancel := context.WithTimeout(call.ctx, p.cfg.QueryTimeout)
	defer cancel()
	store := call.store
	res, err := p.analyze(ctx, call, store, a)
	if err != nil {
		return nil, err
	}
	if again == nil {
		return res, nil
	}
	res.Notes = append([]string{again.note}, res.Notes...)
	return analysisAnswer{AnalysisResult: res, ReadAgain: again}, nil
}

// readAgainAnswer is the file an analysis read again, and the table of
// it the analysis answers on.
type readAgainAnswer struct {
	File    File   `json:"file"`
	TableID string `json:"table_id"`
	note    string
}

// analysisAnswer is an analysis's answer with the file it read again.
type analysisAnswer struct {
	*catalog.AnalysisResult
	ReadAgain *readAgainAnswer `json:"read_again,omitempty"`
}

// analyze plans and runs an analysis, storing its result as a table when
// show is set or the page is past the offload bounds.
func (p *Pipeline) analyze(ctx context.Context, call *toolCall, store *engine.Store, a catalog.Analysis) (*catalog.AnalysisResult, error) {
	plan, err := store.PlanAnalysis(ctx, a)
	if err != nil {
		if a.Lookup != nil {
			err = fileIDError(ctx, store, "lookup.file_id", a.Lookup.FileID, err)
		}
		return nil, fileIDError(ctx, store, "file_id", a.FileID, err)
	}
	if plan.Lookup != nil {
		// The lookup table is read as files.read reads a table.
		attrs := rbac.Attrs{Tool: rbac.ActionAnalyze, Rows: int(plan.Lookup.Table.RowCount), Columns: len(plan.Lookup.Table.Columns)}
		if err := call.authorize(p, rbac.ActionRead, attrs); err != nil {
			return nil, err
		}
	}
	notes, err := store.CheckTextUses(ctx, plan.TextUses())
	if err != nil {
		return nil, err
	}
	res, err := store.Analyze(ctx, plan)
	if err != nil {
		return nil, err
	}
	res.Notes = append(notes, res.Notes...)
	res.Notes = append(res.Notes, tableNotes(ctx, store, a.FileID, plan.Table)...)
	p.cfg.Logger.Debug("files.analyze_table", "user", call.caller.UserID, "table", res.TableID, "sql", res.SQL)
	large, err := pastOffloadBounds(res)
	if err != nil {
		return nil, err
	}
	if !plan.Grouped() || !a.Show && !large {
		return res, nil
	}
	stored, err := p.storeAnalysis(ctx, call, store, plan, res, !a.Show)
	if err != nil {
		return nil, err
	}
	if large {
		if err := trimAnalysis(res, stored); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// pastOffloadBounds reports whether a page has more rows, or more
// characters as compact JSON, than an answer carries inline.
func pastOffloadBounds(res *catalog.AnalysisResult) (bool, error) {
	if len(res.Rows) > analysisInlineRows {
		return true, nil
	}
	b, err := json.Marshal(res.Rows)
	if err != nil {
		return false, fmt.Errorf("toolcall: %w", err)
	}
	return len(b) > analysisInlineChars, nil
}

// storeAnalysis stores the whole result as a table of the caller's, as
// creating a file does. An answer stored only for its size (optional) is
// not stored when the caller may not create tables without approval: it
// is then answered a page at a time.
func (p *Pipeline) storeAnalysis(ctx context.Context, call *toolCall, store *engine.Store, plan *catalog.AnalysisPlan, res *catalog.AnalysisResult, optional bool) (bool, error) {
	attrs := rbac.Attrs{Tool: rbac.ActionAnalyze, Show: true, Derived: true, Rows: int(*res.GroupCount), Groups: int(*res.GroupCount),
		Columns: len(res.Columns)}
	if err := call.authorize(p, rbac.ActionCreate, attrs); err != nil {
		if optional && (errors.Is(err, errNeedsApproval) || datadesk.ErrorCode(err) == datadesk.Forbidden) {
			return false, nil
		}
		return false, err
	}
	view, err := store.ShowAnalysis(ctx, plan, res)
	if optional && datadesk.ErrorCode(err) == datadesk.Invalid {
		// A backend that stores no analyses answers a page at a time.
		return false, nil
	}
	if err != nil || view == nil {
		return false, err
	}
	view.PreviewURL = PreviewURL(view.TableID)
	res.View = view
	return true, nil
}

// trimAnalysis keeps in an answer past the offload bounds only the rows
// that fit them, and says where the rest is.
func trimAnalysis(res *catalog.AnalysisResult, stored bool) error {
	keep := 0
	size := 2
	for keep < len(res.Rows) && keep < analysisInlineRows {
		b, err := json.Marshal(res.Rows[keep])
		if err != nil {
			return fmt.Errorf("toolcall: %w", err)
		}
		if size+len(b)+1 > analysisInlineChars {
			break
		}
		size += len(b) + 1
		keep++
	}
	res.Rows = res.Rows[:keep]
	more := true
	res.HasMore = &more
	if stored {
		res.Notes = append(res.Notes, fmt.Sprintf("the answer holds the first %d groups of this page; all %d groups are stored as table %s: "+
			"page it with files.query_table or analyze it further", keep, *res.GroupCount, res.View.TableID))
		return nil
	}
	res.Notes = append(res.Notes, fmt.Sprintf("the answer holds the first %d groups of %d; ask again with offset %d for the next ones, "+
		"or with show=true to store them all as a table", keep, *res.GroupCount, res.Offset+keep))
	return nil
}
