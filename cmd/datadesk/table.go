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
	"time"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/clickhouse"
)

// clusterFlags say where the ClickHouse cluster for big tables is, and
// from how many rows an upload goes there.
type clusterFlags struct {
	clickhouse.Flags
	minRows *int64
}

func addClusterFlags(fs *flag.FlagSet) clusterFlags {
	return clusterFlags{
		Flags:   clickhouse.AddFlags(fs),
		minRows: fs.Int64("clickhouse-min-rows", 0, "tables of at least this many rows go to the cluster after upload (0: only when moved)"),
	}
}

// apply adds the cluster, if one is configured, to an engine config, and
// reads its servers' version, which decides how analyses are written for
// them (a cluster that does not answer yet is asked at its first use).
func (f clusterFlags) apply(cfg engine.Config) (engine.Config, error) {
	ch, err := f.Client()
	if err != nil || ch == nil {
		return cfg, err
	}
	cfg.Remote, cfg.RemoteMinRows = ch, *f.minRows
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionWait)
	defer cancel()
	if v, err := ch.DetectVersion(ctx); err != nil {
		log.Warn("the ClickHouse cluster does not answer yet; its version is read at its first analysis", "err", err)
	} else {
		log.Info("clickhouse", "version", v.Name, "window_functions", v.WindowFunctions)
	}
	return cfg, nil
}

// versionWait bounds the start-up's wait for the cluster's version.
const versionWait = 5 * time.Second

// tableMove moves one table between the owner's DuckDB file and the
// cluster. With a server running on the data directory, the server does it
// (through its control socket) while it goes on answering; otherwise the
// command opens the data directory itself.
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
	req := moveRequest{TableID: pos[0], To: *to, Owner: *owner}
	var ans *moveAnswer
	eng, err := engine.New(cfg)
	switch {
	case datadesk.ErrorCode(err) == datadesk.Conflict:
		// A server holds the data directory: it moves the table.
		if ans, err = moveThroughServer(*ef.data, req); err != nil {
			return fmt.Errorf("table move: %w", err)
		}
	case err != nil:
		return err
	default:
		defer eng.Close()
		if cfg.Remote == nil {
			return errors.New("table move: no cluster configured (--clickhouse or DATADESK_CLICKHOUSE)")
		}
		o, t, err := eng.MoveTable(context.Background(), req.Owner, req.TableID, req.To)
		if err != nil {
			return err
		}
		ans = &moveAnswer{Owner: o, TableID: t.ID, FileID: t.FileID, Rows: t.RowCount, Location: t.Location}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(ans)
}
