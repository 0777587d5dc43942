package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"datadesk"
	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/rbac"
)

// OwnersConfig says how the many-owners measure runs: a chat platform's
// load, many owners with a table each, queried by concurrent callers in no
// order.
type OwnersConfig struct {
	// Owners are the owner counts to measure, each beside the same load
	// on BaseOwners owners in the same run.
	Owners []int
	// BaseOwners is the small load each count is compared with (10).
	BaseOwners int
	// Rows is the size of each owner's table (50,000).
	Rows int
	// ColdRows is the size of the table on which a first call for an
	// owner that is not open is timed against a warm call (200,000).
	ColdRows int
	// Callers call at once (16); Calls is how many calls each measure
	// makes after every owner's first call (2,000).
	Callers int
	Calls   int
	// Engine is the server's engine configuration (its Dir is set here).
	Engine engine.Config
	// Server is the command that runs a datadesk server, such as the
	// datadesk binary and "serve"; the measure adds --addr, --data and
	// the limits of Engine, and ServerEnv to its environment.
	Server    []string
	ServerEnv []string
	// Dir is a work folder (a temp folder if empty); Results receives
	// owners.md and owners.json.
	Dir      string
	Results  string
	Progress io.Writer
}

// OwnersResult is one load: calls for Owners owners in random order, after
// a first call for each owner (FirstP50, FirstP99: the first calls, made by
// the same callers in random order, as after a restart).
type OwnersResult struct {
	Owners     int           `json:"owners"`
	FirstP50   time.Duration `json:"first_call_p50_ns"`
	FirstP99   time.Duration `json:"first_call_p99_ns"`
	Callers    int           `json:"callers"`
	Calls      int           `json:"calls"`
	Failures   int           `json:"failures"`
	P50        time.Duration `json:"p50_ns"`
	P99        time.Duration `json:"p99_ns"`
	Throughput float64       `json:"calls_per_second"`
	PeakMiB    float64       `json:"peak_rss_mib"`
	// FirstFailure says what the first failed call answered.
	FirstFailure string `json:"first_failure,omitempty"`
}

// ColdResult compares first calls for owners whose database is not open
// with calls for the same owners once open: after the server restarted
// (Restart*), and after their databases were closed for room (Room*).
type ColdResult struct {
	Rows        int           `json:"rows"`
	Calls       int           `json:"calls"`
	RestartCold time.Duration `json:"restart_cold_median_ns"`
	RestartWarm time.Duration `json:"restart_warm_median_ns"`
	RoomCold    time.Duration `json:"room_cold_median_ns"`
	RoomWarm    time.Duration `json:"room_warm_median_ns"`
}

// OwnersReport is a whole many-owners run.
type OwnersReport struct {
	Machine     string            `json:"machine"`
	StartedAt   time.Time         `json:"started_at"`
	Rows        int               `json:"rows_per_owner"`
	MaxOpen     int               `json:"max_open"`
	MemoryLimit string            `json:"memory_limit"`
	Threads     int               `json:"threads"`
	Pairs       [][2]OwnersResult `json:"pairs"`
	Cold        ColdResult        `json:"cold"`
	// Budget is the peak memory the server may reach: its memory limit
	// and 300 MB, in MiB.
	Budget float64 `json:"budget_mib"`
}

func (c *OwnersConfig) setDefaults() {
	if c.BaseOwners <= 0 {
		c.BaseOwners = 10
	}
	if c.Rows <= 0 {
		c.Rows = 50_000
	}
	if c.ColdRows <= 0 {
		c.ColdRows = 200_000
	}
	if c.Callers <= 0 {
		c.Callers = 16
	}
	if c.Calls <= 0 {
		c.Calls = 2000
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Engine.MaxOpen <= 0 {
		c.Engine.MaxOpen = engine.DefaultMaxOpen
	}
	if c.Engine.MemoryLimit == "" {
		c.Engine.MemoryLimit = engine.DefaultMemoryLimit
	}
	if c.Engine.Threads <= 0 {
		c.Engine.Threads = engine.DefaultThreads
	}
}

// coldOwners is how many owners the cold-call measure opens.
const coldOwners = 20

// Owners measures the many-owners load: for each count of owners, calls
// in random order beside the same load on BaseOwners owners, then first
// calls for owners whose database is not open against warm ones. It writes
// owners.md and owners.json to cfg.Results.
func Owners(ctx context.Context, cfg OwnersConfig) (*OwnersReport, error) {
	cfg.setDefaults()
	if len(cfg.Owners) == 0 {
		return nil, fmt.Errorf("bench: no owner counts to measure")
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "datadesk-owners-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	rep := &OwnersReport{Machine: machine(), StartedAt: time.Now().UTC(), Rows: cfg.Rows, MaxOpen: cfg.Engine.MaxOpen,
		MemoryLimit: cfg.Engine.MemoryLimit, Threads: cfg.Engine.Threads}
	most := max(slices.Max(cfg.Owners), cfg.BaseOwners)
	bar := progressbar.NewOptions(most+coldOwners+2*len(cfg.Owners)+1, progressbar.OptionSetWriter(cfg.Progress),
		progressbar.OptionSetDescription("many owners"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	defer bar.Finish()
	in := ingest.New(ingest.Config{})
	template, err := ownerTemplate(ctx, in, filepath.Join(dir, "template"), cfg.Rows)
	if err != nil {
		return nil, err
	}
	coldTemplate, err := ownerTemplate(ctx, in, filepath.Join(dir, "template-cold"), cfg.ColdRows)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	users, err := rbac.OpenUsers(data)
	if err != nil {
		return nil, err
	}
	owners, err := placeOwners(users, data, template, "owner", most, bar)
	if err != nil {
		return nil, err
	}
	cold, err := placeOwners(users, data, coldTemplate, "cold", coldOwners, bar)
	if err != nil {
		return nil, err
	}
	ecfg := cfg.Engine
	limit, err := engine.ParseSize("memory limit", ecfg.MemoryLimit)
	if err != nil {
		return nil, err
	}
	rep.Budget = (float64(limit) + 300e6) / (1 << 20)
	srv, err := startServer(cfg.Server, cfg.ServerEnv, data, ecfg, filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer func() { srv.stop() }()
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * cfg.Callers}}
	load := ownersLoad{base: srv.base, callers: cfg.Callers, client: client, server: srv}
	for _, n := range cfg.Owners {
		small := load.run(owners[:cfg.BaseOwners], cfg.Calls)
		bar.Add(1)
		big := load.run(owners[:n], cfg.Calls)
		bar.Add(1)
		rep.Pairs = append(rep.Pairs, [2]OwnersResult{small, big})
	}
	// After a restart, every owner's database is closed.
	srv.stop()
	if srv, err = startServer(cfg.Server, cfg.ServerEnv, data, ecfg, filepath.Join(dir, "server-restarted.log")); err != nil {
		return nil, err
	}
	load.base = srv.base
	rep.Cold.Rows, rep.Cold.Calls = cfg.ColdRows, len(cold)
	if rep.Cold.RestartCold, rep.Cold.RestartWarm, err = load.coldWarm(cold); err != nil {
		return nil, err
	}
	// With room for one owner, each owner's database is closed when the
	// next one's opens.
	srv.stop()
	room := ecfg
	room.MaxOpen = 1
	if srv, err = startServer(cfg.Server, cfg.ServerEnv, data, room, filepath.Join(dir, "server-room.log")); err != nil {
		return nil, err
	}
	load.base = srv.base
	if _, _, err = load.coldWarm(cold); err != nil {
		return nil, err
	}
	if rep.Cold.RoomCold, rep.Cold.RoomWarm, err = load.coldWarm(cold); err != nil {
		return nil, err
	}
	bar.Add(1)
	if err := writeOwnersReport(rep, cfg.Results); err != nil {
		return nil, err
	}
	return rep, nil
}

// benchOwner is an owner of the measure: their token, id and the call
// their caller makes.
type benchOwner struct {
	id, token, body string
}

// ownerTemplate ingests a generated table of rows into a fresh owner's
// database under dir and returns the owner's folder and the table's id.
func ownerTemplate(ctx context.Context, in *ingest.Ingester, dir string, rows int) (ownerFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ownerFiles{}, err
	}
	csvPath := filepath.Join(dir, "table.csv")
	fh, err := os.Create(csvPath)
	if err != nil {
		return ownerFiles{}, err
	}
	if err := WriteCSV(fh, rows); err != nil {
		fh.Close()
		return ownerFiles{}, err
	}
	if err := fh.Close(); err != nil {
		return ownerFiles{}, err
	}
	eng, err := engine.New(engine.Config{Dir: filepath.Join(dir, "data")})
	if err != nil {
		return ownerFiles{}, err
	}
	defer eng.Close()
	owner := datadesk.NewID("u")
	store, release, err := eng.Acquire(ctx, owner)
	if err != nil {
		return ownerFiles{}, err
	}
	defer release()
	tmp := filepath.Join(store.IncomingDir(), "table.csv")
	if err := engine.CopyFile(csvPath, tmp); err != nil {
		return ownerFiles{}, err
	}
	res, err := in.Read(ctx, tmp, "table.csv", store.IncomingDir())
	if err != nil {
		return ownerFiles{}, err
	}
	defer res.Close()
	f, err := store.AddFile(ctx, engine.NewFile{Filename: "table.csv", ContentType: res.ContentType, TempPath: tmp, Tables: res.Tables})
	if err != nil {
		return ownerFiles{}, err
	}
	return ownerFiles{dir: eng.OwnerDir(owner), table: f.Tables[0].ID}, nil
}

// ownerFiles is a template owner: their folder and their table.
type ownerFiles struct {
	dir, table string
}

// placeOwners adds n users and gives each a copy of the template owner's
// folder: the same table under each owner's own database.
func placeOwners(users *rbac.Users, data string, template ownerFiles, prefix string, n int, bar *progressbar.ProgressBar) ([]benchOwner, error) {
	out := make([]benchOwner, 0, n)
	for i := range n {
		u, token, err := users.Add(fmt.Sprintf("%s%04d", prefix, i), "analyst")
		if err != nil {
			return nil, err
		}
		if err := copyTree(template.dir, filepath.Join(data, "owners", u.ID)); err != nil {
			return nil, err
		}
		out = append(out, benchOwner{id: u.ID, token: token, body: `{"arguments": {"file_id": "` + template.table +
			`", "group_by": ["region"], "aggregates": [{"op": "count"}, {"op": "sum", "column": "amount"}]}}`})
		bar.Add(1)
	}
	return out, nil
}

// copyTree copies the regular files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		return engine.CopyFile(path, filepath.Join(dst, rel))
	})
}

// ownersLoad sends owners' calls to a server.
type ownersLoad struct {
	base    string
	callers int
	client  *http.Client
	server  *serverProcess
}

// run makes a first call for each owner, then calls calls, each for an
// owner drawn at random, from the load's callers at once, and measures
// them and the server's peak memory.
func (l ownersLoad) run(owners []benchOwner, calls int) OwnersResult {
	res := OwnersResult{Owners: len(owners), Callers: l.callers, Calls: calls}
	rng := rand.New(rand.NewPCG(uint64(len(owners)), 7))
	read := l.server.peak()
	first := rng.Perm(len(owners))
	lat, _ := l.calls(&res, len(first), func(i int) benchOwner { return owners[first[i]] })
	res.FirstP50, res.FirstP99 = percentile(lat, 50), percentile(lat, 99)
	lat, elapsed := l.calls(&res, calls, func(int) benchOwner { return owners[rng.IntN(len(owners))] })
	res.PeakMiB = read()
	res.P50, res.P99 = percentile(lat, 50), percentile(lat, 99)
	res.Throughput = float64(len(lat)) / elapsed.Seconds()
	return res
}

// calls makes n calls, the ith for owner(i), from the load's callers at
// once, counting failures into res; it returns the sorted latencies and
// the time all took.
func (l ownersLoad) calls(res *OwnersResult, n int, owner func(i int) benchOwner) ([]time.Duration, time.Duration) {
	next := make(chan benchOwner)
	var (
		mu  sync.Mutex
		lat []time.Duration
		wg  sync.WaitGroup
	)
	start := time.Now()
	for range l.callers {
		wg.Go(func() {
			for o := range next {
				t0 := time.Now()
				err := callThrough(l.client, l.base, o.token, o.body)
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				if err != nil {
					res.Failures++
					if res.FirstFailure == "" {
						res.FirstFailure = err.Error()
					}
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- owner(i)
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return lat, elapsed
}

// percentile returns the pth percentile of sorted latencies.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)*p/100, len(sorted)-1)]
}

// coldWarm times, for each owner in turn, a call and the same call again,
// and returns the medians of the first calls and of the second.
func (l ownersLoad) coldWarm(owners []benchOwner) (cold, warm time.Duration, err error) {
	var first, second []time.Duration
	for _, o := range owners {
		for _, into := range []*[]time.Duration{&first, &second} {
			t0 := time.Now()
			if err := callThrough(l.client, l.base, o.token, o.body); err != nil {
				return 0, 0, fmt.Errorf("first calls: %w", err)
			}
			*into = append(*into, time.Since(t0))
		}
	}
	return median(first), median(second), nil
}

func median(d []time.Duration) time.Duration {
	return Measure{Times: d}.Median()
}

// Markdown renders the many-owners report.
func (rep *OwnersReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Many owners\n\n%s; %d rows per owner; max open %d, memory limit %s, %d threads; started %s.\n\n",
		rep.Machine, rep.Rows, rep.MaxOpen, rep.MemoryLimit, rep.Threads, rep.StartedAt.Format(time.RFC3339))
	b.WriteString("| owners | callers | calls | failures | p50 | p99 | calls/s | peak RSS | p50 vs 10 owners | first calls p50 | first calls p99 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range rep.Pairs {
		for i, r := range p {
			ratio := "1.00x"
			if i == 1 {
				ratio = fmt.Sprintf("%.2fx", float64(r.P50)/float64(p[0].P50))
			}
			fmt.Fprintf(&b, "| %d | %d | %d | %d | %s | %s | %.0f | %.0f MiB | %s | %s | %s |\n", r.Owners, r.Callers, r.Calls, r.Failures,
				ms(r.P50), ms(r.P99), r.Throughput, r.PeakMiB, ratio, ms(r.FirstP50), ms(r.FirstP99))
		}
	}
	for _, p := range rep.Pairs {
		for _, r := range p {
			if r.FirstFailure != "" {
				fmt.Fprintf(&b, "\nFirst failure at %d owners: %s\n", r.Owners, r.FirstFailure)
			}
		}
	}
	c := rep.Cold
	fmt.Fprintf(&b, "\nPeak RSS is the server process's; its budget is the memory limit and 300 MB: %.0f MiB.\n", rep.Budget)
	fmt.Fprintf(&b, "\nFirst call for an owner whose database is not open (%d-row table, %d owners, median):\n\n", c.Rows, c.Calls)
	fmt.Fprintf(&b, "- after a restart: %s, then %s warm: %s more;\n", ms(c.RestartCold), ms(c.RestartWarm), ms(c.RestartCold-c.RestartWarm))
	fmt.Fprintf(&b, "- after being closed for room: %s, then %s warm: %s more.\n", ms(c.RoomCold), ms(c.RoomWarm), ms(c.RoomCold-c.RoomWarm))
	return b.String()
}

func writeOwnersReport(rep *OwnersReport, dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "owners.md"), []byte(rep.Markdown()), 0o644); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "owners.json"), rep)
}
