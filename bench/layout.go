package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// segmentNote lists the segments of each column of a table beside its
// copy's: "customer 5/5, order_id 10/10".
func segmentNote(stored, copied map[string]int64) string {
	var parts []string
	for _, col := range slices.Sorted(maps.Keys(stored)) {
		parts = append(parts, fmt.Sprintf("%s %d/%d", col, stored[col], copied[col]))
	}
	return strings.Join(parts, ", ")
}

// layoutPaths stores the benchmark's rows by each load path and times a
// scan-heavy filter on the stored table against a CREATE TABLE AS copy of
// the same rows, in turns, with the row groups and the segments per column
// each is stored in: a table loaded in small row groups, or cut into more
// segments than its copy, was scanned 2.3 to 2.8 times as slowly. files.create
// and declared tables load through the typed appender XLSX takes.
func (r *runner) layoutPaths() error {
	const filter = `SELECT count(*) FROM data."%s" WHERE contains(lower(note), 'gift')`
	for _, p := range []struct{ name, file string }{{"CSV", "table.csv"}, {"JSON", "table.json"}, {"XLSX", "table.xlsx"}} {
		f, err := r.ingest(p.file)
		if err != nil {
			return err
		}
		id := f.Tables[0].ID
		// A load left in more row groups than a copy has is rewritten
		// in the background: the layout measured is the one that stays.
		start := time.Now()
		for !r.store.LaidOut(id) {
			if time.Since(start) > 5*time.Minute {
				return fmt.Errorf("%s: table %s not laid out in full row groups after five minutes", p.name, id)
			}
			time.Sleep(5 * time.Millisecond)
		}
		settled := time.Since(start)
		copyID, drop, err := r.store.CopyAsWritten(r.ctx, id)
		if err != nil {
			return err
		}
		groups, err := r.store.RowGroups(r.ctx, id)
		if err != nil {
			return err
		}
		copyGroups, err := r.store.RowGroups(r.ctx, copyID)
		if err != nil {
			return err
		}
		segs, err := r.store.Segments(r.ctx, id)
		if err != nil {
			return err
		}
		copySegs, err := r.store.Segments(r.ctx, copyID)
		if err != nil {
			return err
		}
		res := &Result{Name: p.name + " ingest's layout: a contains filter", Baseline: "the same rows copied by CREATE TABLE AS", Target: 1.1,
			Note: fmt.Sprintf("%d row groups, the copy %d; one write in DuckDB's row groups of 122,880 rows makes %d", groups, copyGroups,
				(f.Tables[0].RowCount+122_879)/122_880) + fmt.Sprintf(" (laid out %.0f ms after the load answered)", settled.Seconds()*1000) + "; segments per column, stored/copy: " + segmentNote(segs, copySegs)}
		// A filter of a few milliseconds: timed as the analyses are.
		base := func() error { _, err := r.store.Drain(r.ctx, fmt.Sprintf(filter, copyID)); return err }
		err = r.pairTurns(res, base, func() error { _, err := r.store.Drain(r.ctx, fmt.Sprintf(filter, id)); return err })
		if derr := drop(); err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		if err := r.store.DeleteFile(r.ctx, f.ID); err != nil {
			return err
		}
	}
	return nil
}
