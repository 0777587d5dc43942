package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRunProbesBlameTheHungOne: the probes ran one after another under
// one deadline, so a hung dependency made the ones after it fail too. Now
// each has its own deadline and they run at once: the hung one alone is
// blamed, within its deadline, even when it ignores its context.
func TestRunProbesBlameTheHungOne(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	probes := []Probe{
		{Name: "hung", Run: func(context.Context) error { <-hang; return nil }},
		{Name: "slow but in time", Run: func(ctx context.Context) error { time.Sleep(50 * time.Millisecond); return nil }},
		{Name: "down", Run: func(context.Context) error { return errors.New("connection refused") }},
		{Name: "fine", Run: func(context.Context) error { return nil }},
	}
	start := time.Now()
	checks := RunProbes(context.Background(), probes, 300*time.Millisecond)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v with a deadline of 300ms each", took)
	}
	want := map[string]string{"hung": "did not answer within 300ms", "slow but in time": "", "down": "connection refused", "fine": ""}
	for _, c := range checks {
		got := ""
		if c.Err != nil {
			got = c.Err.Error()
		}
		if w := want[c.Name]; w == "" && got != "" || w != "" && !strings.Contains(got, w) {
			t.Errorf("%s: %q, want %q", c.Name, got, w)
		}
	}
}
