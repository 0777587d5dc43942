package catalog

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Check is the state of one dependency a server relies on, for its
// readiness: Err is nil when it answered; Degrades is its probe's.
type Check struct {
	Name     string
	Err      error
	Took     time.Duration
	Degrades string
}

// Probe asks one dependency whether it answers now; Run must return once
// its context ends. Degrades says what stops working while it does not
// answer, when the server goes on serving without it; empty, the server
// cannot serve without it.
type Probe struct {
	Name     string
	Run      func(ctx context.Context) error
	Degrades string
}

// HealthChecker is a Backend that can say, part by part, whether it
// answers now.
type HealthChecker interface {
	Probes() []Probe
}

// RunProbes runs probes at once, each with a deadline of its own, so a
// hung dependency is blamed alone and in time: a probe past each is
// reported as not answering, whether or not it returns.
func RunProbes(ctx context.Context, probes []Probe, each time.Duration) []Check {
	out := make([]Check, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, each)
			defer cancel()
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- p.Run(pctx) }()
			select {
			case err := <-done:
				if err != nil && pctx.Err() != nil {
					err = fmt.Errorf("did not answer within %s: %w", each, err)
				}
				out[i] = Check{Name: p.Name, Err: err, Took: time.Since(start), Degrades: p.Degrades}
			case <-pctx.Done():
				out[i] = Check{Name: p.Name, Err: fmt.Errorf("did not answer within %s", each), Took: time.Since(start), Degrades: p.Degrades}
			}
		}()
	}
	wg.Wait()
	return out
}
