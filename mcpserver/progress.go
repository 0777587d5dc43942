package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
)

// DefaultProgressAfter is how long a tool call runs before it tells a
// client that asked for progress (a progressToken) where it is, and
// then how often it tells again while a stage lasts.
const DefaultProgressAfter = time.Second

// progress returns ctx whose work's stages (datadesk.ReportProgress)
// become MCP progress notifications of the call req, when its client
// asked for them: none in the call's first ProgressAfter, then each new
// stage at once and the stage again each ProgressAfter while it lasts,
// its progress the seconds the call has run. stop ends them, before the
// call answers.
func (h *Handler) progress(ctx context.Context, req *mcp.CallToolRequest) (context.Context, func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return ctx, func() {}
	}
	every := h.d.ProgressAfter
	start := time.Now()
	var mu sync.Mutex
	stage, sent := "starting", 0.0
	tell := func() {
		ran := time.Since(start)
		if ran < every {
			return
		}
		p := max(ran.Seconds(), sent+0.001)
		sent = p
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p,
			Message: fmt.Sprintf("%s (%.0f s)", stage, ran.Seconds())})
	}
	ctx = datadesk.WithProgress(ctx, func(p datadesk.Progress) {
		mu.Lock()
		defer mu.Unlock()
		stage = p.Stage
		tell()
	})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				mu.Lock()
				tell()
				mu.Unlock()
			}
		}
	})
	return ctx, func() { close(done); wg.Wait() }
}
