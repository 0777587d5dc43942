package bench

import (
	"math"
	"testing"
	"time"
)

// TestRatio: a path run in turns compares each sample with itself, so a
// drift of the machine between samples does not move its ratio; other
// paths compare the two sides' medians.
func TestRatio(t *testing.T) {
	ms := func(v ...int) Measure {
		m := Measure{}
		for _, x := range v {
			m.Times = append(m.Times, time.Duration(x)*time.Millisecond)
		}
		return m
	}
	for _, c := range []struct {
		name string
		r    Result
		want float64
	}{
		// Samples of 1.05x, 1.05x and 1.07x: their median, where the
		// medians' ratio would be 160/150.
		{"paired", Result{Paired: true, Base: ms(100, 200, 150), Subject: ms(105, 210, 160)}, 1.05},
		{"paired, even samples", Result{Paired: true, Base: ms(100, 100, 100, 100), Subject: ms(100, 110, 120, 200)}, 1.15},
		{"medians", Result{Base: ms(100, 200, 300), Subject: ms(300, 300, 300)}, 1.5},
		{"paired but uneven", Result{Paired: true, Base: ms(100, 200), Subject: ms(300)}, 2},
		{"no baseline", Result{Subject: ms(1)}, 0},
	} {
		if got := c.r.Ratio(); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: ratio %v, want %v", c.name, got, c.want)
		}
	}
}
