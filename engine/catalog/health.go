package catalog

import (
	"context"
	"time"
)

// Check is the state of one dependency a server relies on, for its
// readiness: Err is nil when it answered.
type Check struct {
	Name string
	Err  error
	Took time.Duration
}

// HealthChecker is a Backend that can say, part by part, whether it
// answers now.
type HealthChecker interface {
	Health(ctx context.Context) []Check
}

// Timed runs f and reports it as the check called name.
func Timed(name string, f func() error) Check {
	start := time.Now()
	err := f()
	return Check{Name: name, Err: err, Took: time.Since(start)}
}
