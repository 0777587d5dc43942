package bench

import (
	"os"
	"path/filepath"
	"strings"
)

// largestTwin finds the largest .xls workbook in dir that has an .xlsx or
// .xlsm twin (same name), or "" if there is none.
func largestTwin(dir string) (xls, twin string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.xls"))
	var size int64 = -1
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil || st.Size() <= size {
			continue
		}
		base := strings.TrimSuffix(p, filepath.Ext(p))
		for _, ext := range []string{".xlsx", ".xlsm"} {
			if _, err := os.Stat(base + ext); err == nil {
				xls, twin, size = p, base+ext, st.Size()
				break
			}
		}
	}
	return xls, twin
}

// xlsPath measures XLS ingest on the largest corpus workbook that has an
// XLSX twin, beside ingesting that twin. Without a corpus the row is left
// out and the report says why.
func (r *runner) xlsPath() error {
	xls, twin := largestTwin(r.cfg.Corpus)
	if xls == "" {
		r.report.Memory = append(r.report.Memory, "XLS ingest: not measured (no spreadsheet corpus; see --corpus)")
		return nil
	}
	for _, p := range []string{xls, twin} {
		if err := copyInto(p, r.path(filepath.Base(p))); err != nil {
			return err
		}
	}
	res := &Result{Name: "XLS ingest (" + filepath.Base(xls) + ")", Baseline: "ingest of its twin " + filepath.Base(twin)}
	ingest := func(name string) func() error {
		return func() error {
			f, err := r.ingest(name)
			if err != nil {
				return err
			}
			return r.store.DeleteFile(r.ctx, f.ID)
		}
	}
	return r.pair(res, ingest(filepath.Base(twin)), ingest(filepath.Base(xls)))
}

func copyInto(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o600)
}
