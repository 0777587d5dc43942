package bench

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

//go:embed exceljs.cjs
var exceljsScript []byte

// exceljsModules returns the folder whose node_modules holds exceljs, or ""
// when Node or exceljs is not there.
func (r *runner) exceljsModules() string {
	if r.cfg.NodeModules == "" {
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(r.cfg.NodeModules, "node_modules", "exceljs")); err != nil {
		return ""
	}
	return r.cfg.NodeModules
}

// exceljsRead reads file with exceljs's streaming reader in Node and
// returns the time Node measured around the read (its start-up and
// loading of exceljs left out) and the Node process's peak memory.
func (r *runner) exceljsRead(modules, file string) (time.Duration, float64, error) {
	script := filepath.Join(r.dir, "exceljs.cjs")
	if err := os.WriteFile(script, exceljsScript, 0o644); err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(r.ctx, "/usr/bin/env", "node", script, file)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(modules, "node_modules"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("exceljs: %w", err)
	}
	var ans struct {
		MS    float64 `json:"ms"`
		Cells int64   `json:"cells"`
	}
	if err := json.Unmarshal(out, &ans); err != nil || ans.Cells == 0 {
		return 0, 0, fmt.Errorf("exceljs: an answer that does not read: %q", out)
	}
	peak := 0.0
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	return time.Duration(ans.MS * float64(time.Millisecond)), peak, nil
}

// exceljsIngest measures the XLSX ingest beside exceljs's streaming read of
// the same file in Node, in turns, Repeat times.
func (r *runner) exceljsIngest(modules string) error {
	res := &Result{Name: "XLSX ingest vs Node", Baseline: "exceljs streaming read (Node, reading only)", Target: 0.6}
	for i := 0; i < r.cfg.Repeat; i++ {
		tmp, err := r.upload("table.xlsx")
		if err != nil {
			return err
		}
		subject := func() error {
			return timeIt(&res.Subject, func() error {
				f, err := r.ingestUploaded("table.xlsx", tmp)
				if err != nil {
					return err
				}
				return r.store.DeleteFile(r.ctx, f.ID)
			})
		}
		base := func() error {
			d, peak, err := r.exceljsRead(modules, r.path("table.xlsx"))
			if err != nil {
				return err
			}
			res.Base.Times = append(res.Base.Times, d)
			res.Base.PeakMiB = max(res.Base.PeakMiB, peak)
			return nil
		}
		first, second := base, subject
		if i%2 == 1 {
			first, second = subject, base
		}
		if err := first(); err != nil {
			return fmt.Errorf("%s: %w", res.Name, err)
		}
		if err := second(); err != nil {
			return fmt.Errorf("%s: %w", res.Name, err)
		}
		r.bar.Add(1)
	}
	r.report.Results = append(r.report.Results, *res)
	return nil
}
