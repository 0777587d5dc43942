package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/xuri/excelize/v2"

	"datadesk"
	"datadesk/answers"
	"datadesk/api"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/engine/clickhouse"
	"datadesk/engine/typing"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/internal/procmem"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// Config says how big and how often.
type Config struct {
	// Rows is the size of the generated table (default 1,000,000).
	Rows int
	// Repeat is how many times each path and its baseline run, interleaved.
	Repeat int
	// Dir is a work folder for inputs and databases (a temp folder if empty).
	Dir string
	// Results is where the report and chart go.
	Results string
	// Progress receives progress bars; nil for none.
	Progress io.Writer
	// HTTPCalls is how many tool calls each concurrency level makes.
	HTTPCalls int
	// ClickHouse, if set, makes the run measure the query_table paths on a
	// table held by this cluster instead of the DuckDB paths.
	ClickHouse *clickhouse.Cluster
	// Corpus is a folder of real workbooks (the shared sheetjs corpus);
	// XLS ingest is measured on its largest .xls that has an XLSX twin.
	// Empty or missing: that row is left out.
	Corpus string
	// Only, if set, measures these groups of paths alone: ingest, query,
	// export, browse, http, nodes, nodejs.
	Only []string
	// NodeModules is a folder whose node_modules holds @duckdb/node-api;
	// when set, the nodejs paths compare query_table over HTTP with the
	// same statements run by DuckDB in Node.
	NodeModules string
	// Self is a datadesk executable; when set, the ingest group measures
	// the peak memory of its ingest command on the XLSX file and on one of
	// a tenth of its rows, each in a process of its own.
	Self string
}

// Groups of paths Config.Only may name.
var Groups = []string{"ingest", "layout", "query", "analyze", "export", "browse", "http", "nodes", "nodejs"}

// runs reports whether group is measured: the nodejs paths only when
// NodeModules is set or they are named.
func (c Config) runs(group string) bool {
	if len(c.Only) == 0 {
		return group != "nodejs" || c.NodeModules != ""
	}
	return slices.Contains(c.Only, group)
}

// Measure is one path's timings and peak memory.
type Measure struct {
	Times   []time.Duration `json:"times_ns"`
	PeakMiB float64         `json:"peak_mib"`
}

// Median returns the median time.
func (m Measure) Median() time.Duration { return middle(m.Times) }

// middle is the median of v, 0 for none: its middle value, or the mean of
// the two in the middle.
func middle[T ~int64 | ~float64](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Spread returns the fastest and slowest time.
func (m Measure) Spread() (time.Duration, time.Duration) {
	if len(m.Times) == 0 {
		return 0, 0
	}
	return slices.Min(m.Times), slices.Max(m.Times)
}

// Result is a path beside its baseline.
type Result struct {
	Name     string  `json:"name"`
	Baseline string  `json:"baseline"`
	Base     Measure `json:"base"`
	Subject  Measure `json:"subject"`
	// Target is the largest allowed time ratio (subject/baseline); 0 for
	// none.
	Target float64 `json:"target"`
	Note   string  `json:"note,omitempty"`
	// Paired: each sample of the two sides was timed over the same
	// moments (pairTurns), and the ratio is the median of the samples'
	// own ratios.
	Paired bool `json:"paired,omitempty"`
}

// Ratio is the subject's median time over the baseline's, or for paired
// samples the median of each sample's ratio: the comparison of one
// moment of the machine with itself, which its drift from one sample to
// the next does not move.
func (r Result) Ratio() float64 {
	if r.Paired && len(r.Base.Times) == len(r.Subject.Times) {
		ratios := make([]float64, 0, len(r.Base.Times))
		for i, b := range r.Base.Times {
			if b > 0 {
				ratios = append(ratios, float64(r.Subject.Times[i])/float64(b))
			}
		}
		if len(ratios) > 0 {
			return middle(ratios)
		}
	}
	return r.MedianRatio()
}

// MedianRatio is the subject's median time over the baseline's.
func (r Result) MedianRatio() float64 {
	if r.Base.Median() == 0 {
		return 0
	}
	return float64(r.Subject.Median()) / float64(r.Base.Median())
}

// Met reports whether the target holds.
func (r Result) Met() bool { return r.Target == 0 || r.Ratio() <= r.Target }

// HTTPResult is tool calls over HTTP at one concurrency.
type HTTPResult struct {
	Callers    int           `json:"callers"`
	Calls      int           `json:"calls"`
	P50        time.Duration `json:"p50_ns"`
	P99        time.Duration `json:"p99_ns"`
	Throughput float64       `json:"calls_per_second"`
}

// Report is a whole run.
type Report struct {
	Rows      int          `json:"rows"`
	Repeat    int          `json:"repeat"`
	Machine   string       `json:"machine"`
	StartedAt time.Time    `json:"started_at"`
	Results   []Result     `json:"results"`
	HTTP      []HTTPResult `json:"http"`
	// Nodes is tool calls through HAProxy to one node and to two.
	Nodes  []NodesResult `json:"nodes"`
	Memory []string      `json:"memory"`
}

// peak resets the process's peak resident memory and returns a reader of
// it in MiB (Linux; 0 elsewhere).
func peak() func() float64 {
	debug.FreeOSMemory()
	return peakOf("self")
}

// peakOf resets the peak resident memory of process pid ("self" for this
// one) and returns a reader of it in MiB (Linux; 0 elsewhere).
func peakOf(pid string) func() float64 {
	_ = os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0)
	return func() float64 { return procmem.PeakMiB(pid) }
}

// timeIt runs f once and adds its time and peak memory to m.
func timeIt(m *Measure, f func() error) error {
	read := peak()
	start := time.Now()
	if err := f(); err != nil {
		return err
	}
	m.Times = append(m.Times, time.Since(start))
	m.PeakMiB = max(m.PeakMiB, read())
	return nil
}

// timeCall runs f once and adds its time to m, without timeIt's reset of
// the peak memory: that returns the heap to the system first, and a call
// of a millisecond would pay the page faults of taking it back.
func timeCall(m *Measure, f func() error) error {
	start := time.Now()
	if err := f(); err != nil {
		return err
	}
	m.Times = append(m.Times, time.Since(start))
	return nil
}

// pair measures a path and its baseline Repeat times, alternating which
// goes first so that neither always runs on a warmer cache.
func (r *runner) pair(res *Result, base, subject func() error) error {
	return r.pairSteps(res, step{run: base}, step{run: subject})
}

// pairTurns measures a path of a few milliseconds and its baseline, each
// sample n runs of each side (runsPerSample; the name says how many): in
// turns, run by run, the side that goes first alternating, each run timed
// alone and a side's runs summed into its sample. A sample of one side's
// runs in a row, then the other's, meets the machine at two moments, and
// its ratio moves with the noise between them (a path measured 1.15x in
// blocks of 42 runs and 1.06x minutes later); in turns both sides meet
// the same moments, and the ratio is the median of the samples' own
// (Paired). Each side's peak memory is read over a run of its own before.
func (r *runner) pairTurns(res *Result, base, subject func() error) error {
	n, err := runsPerSample(base)
	if err != nil {
		return fmt.Errorf("%s: %w", res.Name, err)
	}
	if n > 1 {
		res.Name += fmt.Sprintf(" (%d runs per sample, in turns)", n)
	} else {
		res.Name += " (in turns)"
	}
	for _, s := range []struct {
		run func() error
		m   *Measure
	}{{base, &res.Base}, {subject, &res.Subject}} {
		read := peak()
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", res.Name, err)
		}
		s.m.PeakMiB = read()
	}
	debug.FreeOSMemory()
	for i := 0; i < r.cfg.Repeat; i++ {
		var sums [2]time.Duration
		for k := range 2 * n {
			side := (k + k/2 + i) % 2
			run := base
			if side == 1 {
				run = subject
			}
			start := time.Now()
			if err := run(); err != nil {
				return fmt.Errorf("%s: %w", res.Name, err)
			}
			sums[side] += time.Since(start)
		}
		res.Base.Times = append(res.Base.Times, sums[0])
		res.Subject.Times = append(res.Subject.Times, sums[1])
		r.bar.Add(1)
	}
	res.Paired = true
	if res.Note != "" {
		res.Note += "; "
	}
	res.Note += fmt.Sprintf("the ratio is the median of the samples' own ratios (the medians' ratio: %.2f)", res.MedianRatio())
	r.report.Results = append(r.report.Results, *res)
	return nil
}

// minSample is the least time one sample of a path takes: a path that
// takes a few milliseconds runs several times per sample, so that the
// machine's noise does not decide its ratio.
const minSample = 100 * time.Millisecond

// runsPerSample is how many runs of base make a sample of minSample, by
// the fastest of three runs (the first may meet a cold cache).
func runsPerSample(base func() error) (int, error) {
	once := time.Duration(math.MaxInt64)
	for range 3 {
		start := time.Now()
		if err := base(); err != nil {
			return 0, err
		}
		once = min(once, time.Since(start))
	}
	once = max(once, time.Millisecond)
	return max(1, int(minSample/once)), nil
}

// step is one side of a pair: prepare, when set, runs untimed before each
// timed run (the bytes put in place, the last run's table removed).
type step struct {
	prepare, run func() error
}

// pairSteps is pair with each side's preparation kept off the clock.
func (r *runner) pairSteps(res *Result, base, subject step) error {
	for i := 0; i < r.cfg.Repeat; i++ {
		first, second := base, subject
		m1, m2 := &res.Base, &res.Subject
		if i%2 == 1 {
			first, second, m1, m2 = subject, base, &res.Subject, &res.Base
		}
		for _, s := range []struct {
			step
			m *Measure
		}{{first, m1}, {second, m2}} {
			if s.prepare != nil {
				if err := s.prepare(); err != nil {
					return fmt.Errorf("%s: %w", res.Name, err)
				}
			}
			if err := timeIt(s.m, s.run); err != nil {
				return fmt.Errorf("%s: %w", res.Name, err)
			}
		}
		r.bar.Add(1)
	}
	r.report.Results = append(r.report.Results, *res)
	return nil
}

type runner struct {
	cfg    Config
	ctx    context.Context
	dir    string
	eng    *engine.Engine
	store  *engine.Store
	base   *Baseline
	in     *ingest.Ingester
	bar    *progressbar.ProgressBar
	report *Report
}

// Run generates the inputs, measures every path against its baseline and
// writes report.md, report.json and chart.png to cfg.Results.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Rows <= 0 {
		cfg.Rows = 1_000_000
	}
	if cfg.Repeat <= 0 {
		cfg.Repeat = 5
	}
	if cfg.HTTPCalls <= 0 {
		cfg.HTTPCalls = 200
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "datadesk-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	r := &runner{cfg: cfg, ctx: ctx, dir: dir, report: &Report{Rows: cfg.Rows, Repeat: cfg.Repeat, Machine: machine(), StartedAt: time.Now().UTC()}}
	if cfg.ClickHouse != nil {
		return r.runCluster()
	}
	if err := r.generate(); err != nil {
		return nil, err
	}
	var err error
	ecfg := engine.Config{Dir: filepath.Join(dir, "data"), MemoryLimit: "2GB"}
	if r.eng, err = engine.New(ecfg); err != nil {
		return nil, err
	}
	defer r.eng.Close()
	var release func()
	if r.store, release, err = r.eng.Acquire(ctx, datadesk.NewID("u")); err != nil {
		return nil, err
	}
	defer release()
	if r.base, err = OpenBaseline(ctx, ecfg, dir, filepath.Join(dir, "in")); err != nil {
		return nil, err
	}
	defer r.base.Close()
	r.in = ingest.New(ingest.Config{})

	steps := (18+len(analyses))*cfg.Repeat + 7
	r.bar = progressbar.NewOptions(steps, progressbar.OptionSetWriter(cfg.Progress), progressbar.OptionSetDescription("measuring"),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	if cfg.runs("ingest") {
		if err := r.ingestPaths(); err != nil {
			return nil, err
		}
		if err := r.xlsPath(); err != nil {
			return nil, err
		}
		if err := r.ingestPeaks(); err != nil {
			return nil, err
		}
		if err := r.wideIngest(); err != nil {
			return nil, err
		}
	}
	table, small, err := r.tables()
	if err != nil {
		return nil, err
	}
	for _, step := range []struct {
		group string
		run   func() error
	}{
		{"layout", r.layoutPaths},
		{"query", func() error { return r.queryPaths(table) }},
		{"analyze", func() error { return r.analyzePaths(table) }},
		{"export", func() error { return r.exportPaths(table, small) }},
		{"browse", func() error { return r.browsePaths(table) }},
		{"http", r.httpPaths},
		{"nodes", r.nodePaths},
		{"nodejs", func() error { return r.nodeJSPaths(table) }},
	} {
		if !cfg.runs(step.group) {
			continue
		}
		if err := step.run(); err != nil {
			return nil, err
		}
	}
	r.bar.Finish()
	if err := writeReport(r.report, cfg.Results); err != nil {
		return nil, err
	}
	return r.report, nil
}

func (r *runner) path(name string) string { return filepath.Join(r.dir, "in", name) }

// generate writes the table as CSV, NDJSON and XLSX, and a tenth of it as
// CSV for the memory comparison.
func (r *runner) generate() error {
	if err := os.MkdirAll(filepath.Join(r.dir, "in"), 0o755); err != nil {
		return err
	}
	bar := progressbar.NewOptions(5, progressbar.OptionSetWriter(r.cfg.Progress), progressbar.OptionSetDescription("generating inputs"),
		progressbar.OptionClearOnFinish())
	defer bar.Finish()
	write := func(name string, f func(io.Writer) error) error {
		fh, err := os.Create(r.path(name))
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(fh, 1<<20)
		if err := f(bw); err != nil {
			fh.Close()
			return err
		}
		if err := bw.Flush(); err != nil {
			fh.Close()
			return err
		}
		bar.Add(1)
		return fh.Close()
	}
	if err := write("table.csv", func(w io.Writer) error { return WriteCSV(w, r.cfg.Rows) }); err != nil {
		return err
	}
	if err := write("tenth.csv", func(w io.Writer) error { return WriteCSV(w, max(r.cfg.Rows/10, 1)) }); err != nil {
		return err
	}
	if !r.cfg.runs("ingest") && !r.cfg.runs("layout") {
		return nil
	}
	if err := write("table.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		rec := map[string]string{}
		for i := 0; i < r.cfg.Rows; i++ {
			for j, v := range Row(i) {
				rec[Header[j]] = v
			}
			if err := enc.Encode(rec); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := write("table.xlsx", func(w io.Writer) error { return writeXLSX(w, r.cfg.Rows) }); err != nil {
		return err
	}
	if r.cfg.Self == "" {
		return nil
	}
	// For the ingest's peak memory (ingestPeaks) alone.
	return write("tenth.xlsx", func(w io.Writer) error { return writeXLSX(w, max(r.cfg.Rows/10, 1)) })
}

// writeXLSX writes the generated table of rows rows as a workbook, every
// value a text cell as the CSV has it.
func writeXLSX(w io.Writer, rows int) error {
	src := exports.Source{Count: int64(rows), Rows: func(yield func([]any) error) error {
		row := make([]any, len(Header))
		for i := 0; i < rows; i++ {
			for j, v := range Row(i) {
				row[j] = v
			}
			if err := yield(row); err != nil {
				return err
			}
		}
		return nil
	}}
	for _, h := range Header {
		src.Columns = append(src.Columns, catalog.Column{Key: h, Label: h, Type: typing.TypeText})
	}
	_, err := exports.WriteXLSX(w, src, exports.Options{})
	return err
}

// ingest stores a file the way an upload does.
func (r *runner) ingest(name string) (*catalog.File, error) {
	tmp, err := r.upload(name)
	if err != nil {
		return nil, err
	}
	return r.ingestUploaded(name, tmp)
}

// upload copies a file into the store's incoming folder, where an upload's
// body is written as it arrives, before ingest reads it.
func (r *runner) upload(name string) (string, error) {
	in, err := os.Open(r.path(name))
	if err != nil {
		return "", err
	}
	defer in.Close()
	tmp := filepath.Join(r.store.IncomingDir(), datadesk.NewID("up"))
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return tmp, out.Close()
}

// deleteFile deletes the stored file *id names, if any, and forgets it.
func (r *runner) deleteFile(id *string) error {
	if *id == "" {
		return nil
	}
	err := r.store.DeleteFile(r.ctx, *id)
	*id = ""
	return err
}

// ingestUploaded reads an uploaded file and stores it.
func (r *runner) ingestUploaded(name, tmp string) (*catalog.File, error) {
	res, err := r.in.Read(r.ctx, tmp, name, r.store.IncomingDir())
	if err != nil {
		return nil, err
	}
	defer res.Close()
	return r.store.AddFile(r.ctx, engine.NewFile{Filename: name, ContentType: res.ContentType, TempPath: tmp, Tables: res.Tables})
}

func (r *runner) ingestPaths() error {
	type path struct {
		name, file, baseline string
		target               float64
		base                 step
	}
	// A baseline's table of the run before is dropped before the clock
	// starts, as the subject's file of the run before is deleted.
	readInto := func(table, reader, file string) step {
		return step{
			prepare: func() error { return r.base.Exec(r.ctx, `DROP TABLE IF EXISTS `+table, "") },
			run: func() error {
				return r.base.Exec(r.ctx, `CREATE TABLE `+table+` AS SELECT * FROM `+reader+`({path})`, r.path(file))
			},
		}
	}
	paths := []path{
		{"CSV ingest", "table.csv", "CREATE TABLE AS SELECT * FROM read_csv(...)", 1.30, readInto("t_csv", "read_csv", "table.csv")},
		{"JSON ingest", "table.json", "CREATE TABLE AS SELECT * FROM read_json(...)", 1.50, readInto("t_json", "read_json", "table.json")},
		{"XLSX ingest", "table.xlsx", "excelize Rows() loop into an Appender", 1.25, step{run: r.bareXLSXIngest}},
	}
	for _, p := range paths {
		res := &Result{Name: p.name, Baseline: p.baseline, Target: p.target}
		// The upload's bytes are in the incoming folder before the clock
		// starts, as the baseline's file is on disk.
		var tmp, last string
		prepare := func() (err error) {
			if err := r.deleteFile(&last); err != nil {
				return err
			}
			tmp, err = r.upload(p.file)
			return err
		}
		if err := r.pairSteps(res, p.base, step{prepare: prepare, run: func() error {
			f, err := r.ingestUploaded(p.file, tmp)
			if err == nil {
				last = f.ID
			}
			return err
		}}); err != nil {
			return err
		}
		if err := r.deleteFile(&last); err != nil {
			return err
		}
	}
	if err := r.uploadPath(); err != nil {
		return err
	}
	// Beside another tool's reader when Node and exceljs are there.
	if modules := r.exceljsModules(); modules != "" {
		return r.exceljsIngest(modules)
	}
	return nil
}

func (r *runner) bareXLSXIngest() error {
	f, err := excelize.OpenFile(r.path("table.xlsx"))
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := f.Rows(f.GetSheetList()[0])
	if err != nil {
		return err
	}
	defer rows.Close()
	return r.base.AppendStrings(r.ctx, "t_xlsx", len(Header), func(yield func([]string) error) error {
		for rows.Next() {
			cols, err := rows.Columns(excelize.Options{RawCellValue: true})
			if err != nil {
				return err
			}
			if err := yield(cols); err != nil {
				return err
			}
		}
		return rows.Error()
	})
}

// tables stores the full table and its tenth for the later paths.
func (r *runner) tables() (*catalog.Table, *catalog.Table, error) {
	f, err := r.ingest("table.csv")
	if err != nil {
		return nil, nil, err
	}
	small, err := r.ingest("tenth.csv")
	if err != nil {
		return nil, nil, err
	}
	r.bar.Add(1)
	return &f.Tables[0], &small.Tables[0], nil
}

// queries are the query_table paths, each beside the statement a person
// would write for the same answer: its page and the counts it carries
// ({t} is the table).
var queries = []struct{ name, args, hand string }{
	{"count with filters", `{"filters":[{"column":"region","op":"eq","value":"north"},{"column":"quantity","op":"gte","value":10}]}`,
		`SELECT count(*) FROM {t} WHERE lower(region) = 'north' AND quantity >= 10`},
	{"group by 1, 4 aggregates", `{"group_by":["region"],"aggregates":[{"op":"count"},{"op":"sum","column":"amount"},{"op":"avg","column":"quantity"},{"op":"max","column":"amount"}]}`,
		`SELECT region, count(*), sum(amount), avg(quantity), max(amount), sum(count(*)) OVER (), count(*) OVER () FROM {t} GROUP BY region ORDER BY region LIMIT 20`},
	{"group by 3, 4 aggregates", `{"group_by":["region","category","quantity"],"aggregates":[{"op":"count"},{"op":"sum","column":"amount"},{"op":"avg","column":"quantity"},{"op":"max","column":"amount"}],"sort_by":"sum_amount","direction":"desc","limit":20}`,
		`SELECT region, category, quantity, count(*), sum(amount) AS s, avg(quantity), max(amount), sum(count(*)) OVER (), count(*) OVER () FROM {t} GROUP BY region, category, quantity ORDER BY s DESC LIMIT 20`},
	{"contains filter", `{"filters":[{"column":"note","op":"contains","value":"gift"}]}`,
		`SELECT count(*) FROM {t} WHERE contains(lower(note), 'gift')`},
	{"top 20 sorted", `{"columns":["order_id","amount"],"sort_by":"amount","direction":"desc","limit":20}`,
		`SELECT (SELECT count(*) FROM {t}), order_id, amount FROM {t} ORDER BY amount DESC LIMIT 20`},
	{"deep offset", `{"columns":["order_id","amount"],"limit":20,"offset":100000}`,
		`SELECT (SELECT count(*) FROM {t}), order_id, amount FROM {t} LIMIT 20 OFFSET {offset}`},
}

func (r *runner) queryPaths(t *catalog.Table) error {
	for _, q := range queries {
		var query catalog.Query
		dec := json.NewDecoder(strings.NewReader(q.args))
		dec.UseNumber()
		if err := dec.Decode(&query); err != nil {
			return err
		}
		query.FileID = t.ID
		query.Offset = min(query.Offset, max(r.cfg.Rows-20, 0))
		hand := strings.NewReplacer("{t}", `data."`+t.ID+`"`, "{offset}", strconv.Itoa(query.Offset)).Replace(q.hand)
		res := &Result{Name: "query_table: " + q.name, Baseline: "the statement a person would write", Target: 1.15}
		// A few milliseconds a run: timed as the analyses are.
		base := func() error { _, err := r.store.Drain(r.ctx, hand); return err }
		if err := r.pairTurns(res, base, func() error {
			p, err := r.store.Plan(r.ctx, query)
			if err != nil {
				return err
			}
			_, err = r.store.Run(r.ctx, p)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) source(t *catalog.Table) exports.Source {
	return exports.Source{Columns: t.Columns, Count: t.RowCount, Rows: func(yield func([]any) error) error {
		_, err := r.store.Scan(r.ctx, t.ID, yield)
		return err
	}}
}

func (r *runner) exportPaths(t, small *catalog.Table) error {
	out := filepath.Join(r.dir, "in", "out")
	xlsx := &Result{Name: "XLSX export", Baseline: "bare excelize StreamWriter loop", Target: 0.5}
	if err := r.pair(xlsx, func() error {
		f := excelize.NewFile()
		defer f.Close()
		sw, err := f.NewStreamWriter("Sheet1")
		if err != nil {
			return err
		}
		n := 0
		if _, err := r.store.Scan(r.ctx, t.ID, func(row []any) error {
			n++
			ref, _ := excelize.CoordinatesToCellName(1, n)
			return sw.SetRow(ref, row)
		}); err != nil {
			return err
		}
		if err := sw.Flush(); err != nil {
			return err
		}
		return f.SaveAs(out + ".bare.xlsx")
	}, func() error {
		fh, err := os.Create(out + ".xlsx")
		if err != nil {
			return err
		}
		defer fh.Close()
		_, err = exports.WriteXLSX(fh, r.source(t), exports.Options{})
		return err
	}); err != nil {
		return err
	}
	// Peak memory of the export at the full size against a tenth of it.
	var full, tenth Measure
	if err := timeIt(&tenth, func() error { _, err := exports.WriteXLSX(io.Discard, r.source(small), exports.Options{}); return err }); err != nil {
		return err
	}
	if err := timeIt(&full, func() error { _, err := exports.WriteXLSX(io.Discard, r.source(t), exports.Options{}); return err }); err != nil {
		return err
	}
	ratio := full.PeakMiB / max(tenth.PeakMiB, 1)
	verdict := "met"
	if ratio > 1.5 {
		verdict = "MISSED"
	}
	r.report.Memory = append(r.report.Memory, fmt.Sprintf("XLSX export peak memory: %.0f MiB at %d rows, %.0f MiB at %d rows: %.2fx (target at most 1.5x: %s)",
		full.PeakMiB, t.RowCount, tenth.PeakMiB, small.RowCount, ratio, verdict))
	r.bar.Add(1)

	if err := r.base.Exec(r.ctx, `CREATE OR REPLACE TABLE t_csv AS SELECT * FROM read_csv({path})`, r.path("table.csv")); err != nil {
		return err
	}
	csvRes := &Result{Name: "CSV export", Baseline: "COPY ... TO", Target: 1.5}
	return r.pair(csvRes, func() error {
		return r.base.Exec(r.ctx, `COPY t_csv TO {path} (HEADER)`, out+".copy.csv")
	}, func() error {
		fh, err := os.Create(out + ".csv")
		if err != nil {
			return err
		}
		defer fh.Close()
		// As the server exports a whole table: by DuckDB's writer where it
		// writes every value as the exports do.
		src := r.source(t)
		src.CSV = func(w io.Writer) (bool, error) { return r.store.CopyCSV(r.ctx, t.ID, w) }
		_, err = exports.WriteCSV(fh, src, exports.Options{})
		return err
	})
}

// browsePaths measures the last page of the table against its first, in
// file order and sorted, in turns as the analyses are (pairTurns): a page
// takes a few milliseconds. The sorted last page is held to the
// analyses' 1.15x.
func (r *runner) browsePaths(t *catalog.Table) error {
	last := max(t.RowCount-catalog.DefaultPageSize, 0)
	for _, sortKey := range []string{"", "amount"} {
		res := &Result{Name: "browse: last page vs first, file order", Baseline: "the first page", Target: 1.5}
		if sortKey != "" {
			res.Name, res.Target = "browse: last page vs first, sorted", 1.15
		}
		first := func() error { _, err := r.store.Rows(r.ctx, t.ID, catalog.PageRequest{Sort: sortKey}); return err }
		if err := r.pairTurns(res, first, func() error {
			_, err := r.store.Rows(r.ctx, t.ID, catalog.PageRequest{Offset: last, Sort: sortKey})
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// uploadPath measures a CSV upload end to end over HTTP on loopback (the
// multipart body streamed from the file as a client sends it, received,
// stored and loaded) against DuckDB's read_csv of the same file. The
// upload of the run before is deleted before the clock starts, as the
// baseline's table is dropped.
func (r *runner) uploadPath() error {
	h, err := r.serveTable("upload", "tenth.csv", 0)
	if err != nil {
		return err
	}
	defer h.close()
	client := &http.Client{}
	res := &Result{Name: "CSV upload over HTTP", Baseline: "CREATE TABLE AS SELECT * FROM read_csv(...)", Target: 1.30}
	var last string
	deleteLast := func() error {
		if last == "" {
			return nil
		}
		err := h.delete(client, last)
		last = ""
		return err
	}
	base := step{
		prepare: func() error { return r.base.Exec(r.ctx, `DROP TABLE IF EXISTS t_up`, "") },
		run: func() error {
			return r.base.Exec(r.ctx, `CREATE TABLE t_up AS SELECT * FROM read_csv({path})`, r.path("table.csv"))
		},
	}
	if err := r.pairSteps(res, base, step{prepare: deleteLast, run: func() error {
		id, err := h.upload(client, r.path("table.csv"))
		last = id
		return err
	}}); err != nil {
		return err
	}
	return deleteLast()
}

// upload sends the file at path as a multipart upload, streamed, and
// returns the stored file's id.
func (h *httpTarget) upload(client *http.Client, path string) (string, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		f, err := os.Open(path)
		if err == nil {
			var part io.Writer
			if part, err = mw.CreateFormFile("file", filepath.Base(path)); err == nil {
				_, err = io.Copy(part, f)
			}
			f.Close()
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	return postFile(client, h.base, h.token, pr, mw.FormDataContentType())
}

// postFile sends a multipart upload's body as the token's owner and
// returns the stored file's id.
func postFile(client *http.Client, base, token string, body io.Reader, contentType string) (string, error) {
	req, err := http.NewRequest("POST", base+"/v1/files", body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var ans struct {
		File struct {
			ID string `json:"id"`
		} `json:"file"`
	}
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return "", fmt.Errorf("upload: status %d: %s", resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || ans.File.ID == "" {
		return "", errors.Join(errors.New("upload: no file id"), err)
	}
	return ans.File.ID, nil
}

// delete deletes a stored file.
func (h *httpTarget) delete(client *http.Client, id string) error {
	req, err := http.NewRequest("DELETE", h.base+"/v1/files/"+id, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("delete: status %d", resp.StatusCode)
	}
	return nil
}

// httpTarget is a datadesk server on loopback holding one table of one
// analyst's, called over HTTP.
type httpTarget struct {
	base       string
	url, token string
	file       *catalog.File
	close      func()
	// answers is the server's answers' cache, nil when it keeps none.
	answers *answers.Cache
}

// serveTable starts a server in a folder of its own under name, with the
// input file csv uploaded by an analyst, and an answers' cache of
// cacheBytes (none when 0).
func (r *runner) serveTable(name, csv string, cacheBytes int64) (*httpTarget, error) {
	dir := filepath.Join(r.dir, name)
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*httpTarget, error) { closeAll(); return nil, err }
	users, err := rbac.OpenUsers(dir)
	if err != nil {
		return nil, err
	}
	u, token, err := users.Add("bench", "analyst")
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(engine.Config{Dir: dir, MemoryLimit: "1GB"})
	if err != nil {
		return nil, err
	}
	closers = append(closers, func() { eng.Close() })
	system, err := serverdb.Open(r.ctx, eng.Dir())
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { system.Close() })
	audit, err := rbac.OpenAudit(dir)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { audit.Close() })
	policy, err := rbac.NewPolicy(rbac.DefaultPolicy)
	if err != nil {
		return fail(err)
	}
	cache := answers.New(cacheBytes)
	srv, err := api.New(api.Config{SigningKey: []byte(strings.Repeat("b", 32)), DataDir: dir},
		api.Deps{Engine: eng, System: system, Ingest: r.in, Users: users, Policy: policy, Audit: audit, Answers: cache})
	if err != nil {
		return fail(err)
	}
	f, err := r.uploadAs(eng, u.ID, csv)
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	closers = append(closers, func() { hs.Close() })
	base := "http://" + ln.Addr().String()
	return &httpTarget{base: base, url: base + "/v1/tools/files.query_table", token: token, file: f, close: closeAll, answers: cache}, nil
}

// uploadAs stores a copy of input file name as owner's, as an upload would.
func (r *runner) uploadAs(eng *engine.Engine, owner, name string) (*catalog.File, error) {
	store, release, err := eng.Acquire(r.ctx, owner)
	if err != nil {
		return nil, err
	}
	defer release()
	tmp := filepath.Join(store.IncomingDir(), "up")
	if err := engine.CopyFile(r.path(name), tmp); err != nil {
		return nil, err
	}
	res, err := r.in.Read(r.ctx, tmp, name, store.IncomingDir())
	if err != nil {
		return nil, err
	}
	defer res.Close()
	return store.AddFile(r.ctx, engine.NewFile{Filename: name, TempPath: tmp, Tables: res.Tables})
}

// call makes one files.query_table call with args (the file id added) and
// reads the whole answer.
func (h *httpTarget) call(client *http.Client, args string) error {
	body := `{"arguments": {"file_id": "` + h.file.ID + `", ` + strings.TrimPrefix(args, "{") + `}`
	req, err := http.NewRequest("POST", h.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := h.send(client, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// send sends req as the analyst and returns a 200 answer; any other is an
// error with the start of its body.
func (h *httpTarget) send(client *http.Client, req *http.Request) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return resp, nil
}

// exportCSV downloads the table's CSV export over HTTP into the file
// path, as a client saving it does.
func (h *httpTarget) exportCSV(client *http.Client, path string) error {
	req, err := http.NewRequest("GET", h.base+"/v1/tables/"+h.file.Tables[0].ID+"/export?format=csv", nil)
	if err != nil {
		return err
	}
	resp, err := h.send(client, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// httpPaths calls files.query_table over HTTP on loopback at 1, 4 and 16
// concurrent callers.
func (r *runner) httpPaths() error {
	h, err := r.serveTable("http", "tenth.csv", 0)
	if err != nil {
		return err
	}
	defer h.close()
	args := `{"group_by": ["region"], "aggregates": [{"op": "count"}, {"op": "sum", "column": "amount"}]}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	for _, callers := range []int{1, 4, 16} {
		lat, elapsed, err := callsAtOnce(callers, max(r.cfg.HTTPCalls/callers, 1), func(int) error { return h.call(client, args) })
		if err != nil {
			return fmt.Errorf("tool calls over HTTP: %w", err)
		}
		r.report.HTTP = append(r.report.HTTP, HTTPResult{Callers: callers, Calls: len(lat), P50: lat[len(lat)/2],
			P99: lat[min(len(lat)*99/100, len(lat)-1)], Throughput: float64(len(lat)) / elapsed.Seconds()})
		r.bar.Add(1)
	}
	return nil
}

// callsAtOnce runs call per times on each of callers goroutines at once,
// caller c passing c, and returns every call's time, sorted, how long they
// took together and the first error, after every call has run.
func callsAtOnce(callers, per int, call func(c int) error) ([]time.Duration, time.Duration, error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var lat []time.Duration
	var first error
	start := time.Now()
	for c := range callers {
		wg.Go(func() {
			for range per {
				t0 := time.Now()
				err := call(c)
				d := time.Since(t0)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return lat, elapsed, first
}

// machine describes where the run happened.
func machine() string {
	cpu := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					cpu = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]); len(f) >= 2 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			mem = fmt.Sprintf(", %.0f GiB", kb/1024/1024)
		}
	}
	return fmt.Sprintf("%s, %d cores%s, %s/%s, %s", cpu, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
