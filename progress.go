package datadesk

import "context"

// Progress is where long work is: its stage in words ("reading", "typing
// and storing") and, when it counts something, how much of how much.
type Progress struct {
	Stage       string
	Done, Total int64
}

type progressKey struct{}

// WithProgress returns ctx whose work tells report where it is, for a
// caller who waits on it to show (an upload's page, an MCP client that
// asked for progress).
func WithProgress(ctx context.Context, report func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// ReportProgress tells ctx's reporter, if it has one, where work is.
func ReportProgress(ctx context.Context, p Progress) {
	if report, ok := ctx.Value(progressKey{}).(func(Progress)); ok {
		report(p)
	}
}
