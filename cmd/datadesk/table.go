package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/clickhouse"
)

// clusterFlags say where the ClickHouse cluster for big tables is. The
// password comes from the environment only, so it never shows in a
// process list.
type clusterFlags struct {
	nodes   *string
	cluster *string
	db      *string
	user    *string
	minRows *int64
}

func addClusterFlags(fs *flag.FlagSet) clusterFlags {
	return clusterFlags{
		nodes:   fs.String("clickhouse", envOr("DATADESK_CLICKHOUSE", ""), "comma-separated HTTP URLs of every ClickHouse shard (empty: no cluster)"),
		cluster: fs.String("clickhouse-cluster", envOr("DATADESK_CLICKHOUSE_CLUSTER", "datadesk"), "cluster name in the servers' remote_servers"),
		db:      fs.String("clickhouse-db", envOr("DATADESK_CLICKHOUSE_DB", "datadesk"), "ClickHouse database for tables"),
		user:    fs.String("clickhouse-user", envOr("DATADESK_CLICKHOUSE_USER", "default"), "ClickHouse user (password: DATADESK_CLICKHOUSE_PASSWORD)"),
		minRows: fs.Int64("clickhouse-min-rows", 0, "tables of at least this many rows go to the cluster after upload (0: only when moved)"),
	}
}

// client returns the configured cluster's client, nil when none is.
func (f clusterFlags) client() (*clickhouse.Cluster, error) {
	nodes := splitList(*f.nodes)
	if len(nodes) == 0 {
		return nil, nil
	}
	return clickhouse.New(clickhouse.Config{Nodes: nodes, Cluster: *f.cluster, Database: *f.db,
		User: *f.user, Password: os.Getenv("DATADESK_CLICKHOUSE_PASSWORD")})
}

// apply adds the cluster, if one is configured, to an engine config.
func (f clusterFlags) apply(cfg engine.Config) (engine.Config, error) {
	ch, err := f.client()
	if err != nil || ch == nil {
		return cfg, err
	}
	cfg.Remote, cfg.RemoteMinRows = ch, *f.minRows
	return cfg, nil
}

// tableMove moves one table between the owner's DuckDB file and the
// cluster. It opens the owner's database itself, so the server must not be
// running on the same data directory.
func tableMove(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table move", flag.ContinueOnError)
	to := fs.String("to", "", "where the table goes: clickhouse or duckdb")
	owner := fs.String("owner", "", "owner id (found from the table id when empty)")
	ef := addEngineFlags(fs)
	cf := addClusterFlags(fs)
	pos, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *to == "" {
		return errors.New("table move: want ID --to clickhouse|duckdb")
	}
	cfg, err := cf.apply(ef.config(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err != nil {
		return err
	}
	if cfg.Remote == nil {
		return errors.New("table move: no cluster configured (--clickhouse or DATADESK_CLICKHOUSE)")
	}
	cfg.RemoteMinRows = 0
	eng, err := engine.New(cfg)
	if err != nil {
		return err
	}
	defer eng.Close()
	ctx := context.Background()
	owners := []string{*owner}
	if *owner == "" {
		entries, err := os.ReadDir(filepath.Join(*ef.data, "owners"))
		if err != nil {
			return err
		}
		owners = owners[:0]
		for _, e := range entries {
			owners = append(owners, e.Name())
		}
	}
	for _, o := range owners {
		store, release, err := eng.Acquire(ctx, o)
		if err != nil {
			// DuckDB lets one process open a database file: a running
			// server on the same data directory is the usual cause.
			return fmt.Errorf("table move: owner %s (stop the server on %s first): %w", o, *ef.data, err)
		}
		if _, err := store.Table(ctx, pos[0]); datadesk.ErrorCode(err) == datadesk.NotFound {
			release()
			continue
		}
		t, err := store.MoveTable(ctx, pos[0], *to)
		release()
		if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"owner": o, "table_id": t.ID, "file_id": t.FileID, "rows": t.RowCount, "location": t.Location})
	}
	return fmt.Errorf("table move: no table %q", pos[0])
}
