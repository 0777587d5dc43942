package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/backup"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/engine/clickhouse"
	"datadesk/engine/clickhousetest"
	"datadesk/internal/testenv"
)

// TestTableMoveBothWays moves a stored table to a local two-shard cluster
// and back with the command, and compares its rows with the original.
func TestTableMoveBothWays(t *testing.T) {
	t.Parallel()
	cluster, err := clickhousetest.Start(2)
	if errors.Is(err, clickhousetest.ErrNoServer) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	dir := t.TempDir()
	ctx := context.Background()
	var tableID string
	scan := func() string {
		eng, err := engine.New(engine.Config{Dir: dir, MemoryLimit: "256MB"})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		owner := datadesk.NewID("u")
		if entries, _ := os.ReadDir(filepath.Join(dir, "owners")); len(entries) == 1 {
			owner = entries[0].Name()
		}
		s, release, err := eng.Acquire(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		if tableID == "" {
			tmp := filepath.Join(s.IncomingDir(), "up")
			os.WriteFile(tmp, []byte("x"), 0o600)
			f, err := s.AddFile(ctx, engine.NewFile{Filename: "m.csv", TempPath: tmp, Tables: []engine.TableSource{{
				Name: "m", Header: []string{"code", "amount", "at"},
				Rows: func(yield func([]string) error) (engine.RowStats, error) {
					for i := range 300 {
						at := fmt.Sprintf("2024-03-%02d 10:00:%02d.%06d", 1+i%28, i%60, i*1237%1000000)
						if i%7 == 0 {
							at = ""
						}
						if err := yield([]string{fmt.Sprintf("%05d", i), fmt.Sprintf("%d.%02d", i, i%100), at}); err != nil {
							return engine.RowStats{}, err
						}
					}
					return engine.RowStats{}, nil
				}}}})
			if err != nil {
				t.Fatal(err)
			}
			tableID = f.Tables[0].ID
		}
		var b strings.Builder
		if _, err := s.Scan(ctx, tableID, func(row []any) error { fmt.Fprintf(&b, "%v\n", row); return nil }); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	original := scan()
	move := func(to string) {
		var out bytes.Buffer
		err := run([]string{"table", "move", tableID, "--to", to, "--data", dir, "--memory-limit", "256MB",
			"--clickhouse", strings.Join(cluster.Nodes, ","), "--clickhouse-cluster", cluster.Name}, &out, &out)
		if err != nil {
			t.Fatalf("move to %s: %v\n%s", to, err, out.String())
		}
		var got struct {
			Location string `json:"location"`
			Rows     int64  `json:"rows"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Location != to || got.Rows != 300 {
			t.Fatalf("move to %s printed %s", to, out.String())
		}
	}
	move(catalog.LocationClickHouse)
	if got := scanWithCluster(t, dir, tableID, cluster); got != original {
		t.Errorf("rows on the cluster differ from the original")
	}
	move(catalog.LocationDuckDB)
	if got := scan(); got != original {
		t.Errorf("rows moved back differ from the original")
	}
	var out bytes.Buffer
	if err := run([]string{"table", "move", "t_nosuchtable000000000000000000", "--to", "clickhouse", "--data", dir,
		"--clickhouse", strings.Join(cluster.Nodes, ",")}, &out, &out); err == nil {
		t.Errorf("moving a missing table succeeded")
	}

	// With a server holding the data directory, the command asks it, and
	// the server moves the table while it answers.
	ch, err := clickhouse.New(clickhouse.Config{Nodes: cluster.Nodes, Cluster: cluster.Name, Database: cluster.Database})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Dir: dir, MemoryLimit: "256MB", Remote: ch})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := serveControl(sctx, backup.Sources{Data: dir, Engine: eng}, slog.New(slog.DiscardHandler), func(string, error, time.Duration) {}); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{catalog.LocationClickHouse, catalog.LocationDuckDB} {
		move(to)
		entries, _ := os.ReadDir(filepath.Join(dir, "owners"))
		s, release, err := eng.Acquire(ctx, entries[0].Name())
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, err = s.Scan(ctx, tableID, func(row []any) error { fmt.Fprintf(&b, "%v\n", row); return nil })
		release()
		if err != nil || b.String() != original {
			t.Errorf("rows after the server moved them to %s differ: %v", to, err)
		}
	}
	out.Reset()
	// Through the control socket the error keeps its code.
	if err := run([]string{"table", "move", "t_nosuchtable000000000000000000", "--to", "clickhouse", "--data", dir}, &out, &out); err == nil ||
		!strings.Contains(err.Error(), "no table") || datadesk.ErrorCode(err) != datadesk.NotFound {
		t.Errorf("moving a missing table through the server: %v (code %s)", err, datadesk.ErrorCode(err))
	}
}

func scanWithCluster(t *testing.T, dir, tableID string, c *clickhousetest.Cluster) string {
	t.Helper()
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: c.Database})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Dir: dir, MemoryLimit: "256MB", Remote: ch})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	entries, _ := os.ReadDir(filepath.Join(dir, "owners"))
	s, release, err := eng.Acquire(context.Background(), entries[0].Name())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var b strings.Builder
	if _, err := s.Scan(context.Background(), tableID, func(row []any) error { fmt.Fprintf(&b, "%v\n", row); return nil }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
