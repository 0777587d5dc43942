package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"datadesk"
)

// TestMain doubles as a child process that ingests until it is killed,
// and stops the ClickHouse cluster if a test started it.
func TestMain(m *testing.M) {
	if dir := os.Getenv("DATADESK_TEST_KILLED_INGEST"); dir != "" {
		killedIngestChild(dir, os.Getenv("DATADESK_TEST_OWNER"))
		return
	}
	code := m.Run()
	stopTestCluster()
	os.Exit(code)
}

// killedIngestChild commits one file, then starts a long ingest and says so
// on stdout, and waits to be killed midway.
func killedIngestChild(dir, owner string) {
	ctx := context.Background()
	e, err := New(Config{Dir: dir, MemoryLimit: "256MB"})
	if err != nil {
		panic(err)
	}
	s, _, err := e.Acquire(ctx, owner)
	if err != nil {
		panic(err)
	}
	write := func() string {
		p := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
		if err := os.WriteFile(p, []byte("bytes"), 0o600); err != nil {
			panic(err)
		}
		return p
	}
	if _, err := s.AddFile(ctx, NewFile{Filename: "kept.csv", TempPath: write(), Tables: []TableSource{
		rowsSource("kept", []string{"a"}, [][]string{{"1"}, {"2"}})}}); err != nil {
		panic(err)
	}
	src := TableSource{Name: "killed", Header: []string{"id", "v"}, Rows: func(yield func([]string) error) (RowStats, error) {
		for i := 0; ; i++ {
			if err := yield([]string{fmt.Sprintf("%08d", i), "x"}); err != nil {
				return RowStats{}, err
			}
			if i == 200000 {
				fmt.Println("loading")
			}
		}
	}}
	_, err = s.AddFile(ctx, NewFile{Filename: "killed.csv", TempPath: write(), Tables: []TableSource{src}})
	panic(fmt.Sprint("the endless ingest ended: ", err))
}

// TestKilledIngest kills a process midway through an ingest: after restart,
// the committed file is whole, and nothing of the killed one remains.
func TestKilledIngest(t *testing.T) {
	dir := t.TempDir()
	owner := datadesk.NewID("u")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DATADESK_TEST_KILLED_INGEST="+dir, "DATADESK_TEST_OWNER="+owner)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "loading" {
				lines <- "loading"
				return
			}
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok {
			cmd.Wait()
			t.Fatalf("child ended before loading: %v", l)
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("child never started loading")
	}
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	e, err := New(Config{Dir: dir, MemoryLimit: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, release, err := e.Acquire(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	files, err := s.Files(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Filename != "kept.csv" || files[0].Tables[0].RowCount != 2 {
		t.Fatalf("got files %+v, want only kept.csv with 2 rows", files)
	}
	orphans, err := s.orphanTables(context.Background())
	if err != nil || len(orphans) != 0 {
		t.Errorf("orphan tables %v (%v)", orphans, err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'data'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("got %d data tables (%v), want 1", n, err)
	}
	entries, _ := os.ReadDir(filepath.Join(e.OwnerDir(owner), "files"))
	if len(entries) != 1 || entries[0].Name() != files[0].ID {
		t.Errorf("bytes left: %v", entries)
	}
	incoming, _ := os.ReadDir(s.IncomingDir())
	if len(incoming) != 0 {
		t.Errorf("temp files left: %v", incoming)
	}
}

func TestLRUCap(t *testing.T) {
	e, err := New(Config{Dir: t.TempDir(), MaxOpen: 2, MemoryLimit: "128MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	owners := []string{datadesk.NewID("u"), datadesk.NewID("u"), datadesk.NewID("u"), datadesk.NewID("u")}
	held, releaseHeld, err := e.Acquire(ctx, owners[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range owners[1:] {
		_, release, err := e.Acquire(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	// Idle stores are closed in the background, soon after release.
	deadline := time.Now().Add(10 * time.Second)
	for e.OpenCount() != 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := e.OpenCount(); got != 2 {
		t.Errorf("open: got %d, want 2", got)
	}
	// The store in use was not closed under its holder.
	if _, err := held.Files(ctx, "", 0); err != nil {
		t.Errorf("held store: %v", err)
	}
	again, release, err := e.Acquire(ctx, owners[0])
	if err != nil || again != held {
		t.Errorf("second acquire of an open store gave another instance")
	}
	release()
	releaseHeld()
}
