package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
)

// ingestPeakRuns is how many processes measure each size.
const ingestPeakRuns = 3

// ingestPeaks measures the peak memory of XLSX ingest at the full size and
// at a tenth of it: each a datadesk ingest process of its own, started
// fresh, so nothing an earlier path left in this process counts; the
// median of ingestPeakRuns of each.
func (r *runner) ingestPeaks() error {
	if r.cfg.Self == "" {
		return nil
	}
	tenth, err := r.childPeak("tenth.xlsx")
	if err != nil {
		return err
	}
	full, err := r.childPeak("table.xlsx")
	if err != nil {
		return err
	}
	ratio := full / max(tenth, 1)
	verdict := "met"
	if ratio > 1.5 {
		verdict = "MISSED"
	}
	r.report.Memory = append(r.report.Memory, fmt.Sprintf("XLSX ingest peak memory (a datadesk ingest process, median of %d): %.0f MiB at %d rows, %.0f MiB at %d rows: %.2fx (target at most 1.5x: %s)",
		ingestPeakRuns, full, r.cfg.Rows, tenth, max(r.cfg.Rows/10, 1), ratio, verdict))
	return nil
}

// childPeak runs datadesk ingest on the generated file name and returns the
// median of its processes' peak resident memory, in MiB.
func (r *runner) childPeak(name string) (float64, error) {
	var peaks []float64
	for range ingestPeakRuns {
		// The process reads its own peak: the kernel's figure for a
		// child started by Go also counts this process's memory.
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(r.ctx, r.cfg.Self, "ingest", "--memory", r.path(name))
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("bench: datadesk ingest %s: %w: %.2000s", name, err, stderr.Bytes())
		}
		var report struct {
			Peak float64 `json:"peak_memory_mib"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
			return 0, fmt.Errorf("bench: datadesk ingest %s: %w", name, err)
		}
		peaks = append(peaks, report.Peak)
	}
	slices.Sort(peaks)
	return peaks[len(peaks)/2], nil
}
