package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/clickhouse"
	"datadesk/engine/clickhousetest"
	"datadesk/internal/testenv"
)

// TestClickHouseReplicaDown moves a table to a cluster of two shards of
// two replicas (ReplicatedMergeTree through ZooKeeper), then kills a
// replica, the first node, which the queries go to, while callers ask:
// every answer is right and none fails.
func TestClickHouseReplicaDown(t *testing.T) {
	c, err := clickhousetest.StartReplicated(2, 2)
	if errors.Is(err, clickhousetest.ErrNoServer) || errors.Is(err, clickhousetest.ErrNoZooKeeper) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: c.Database, Replicas: c.Replicas})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ch.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	e := newClusterEngine(t, ch, 0)
	owner := datadesk.NewID("u")
	s := acquire(t, e, owner)
	rows := make([][]string, 5000)
	var sum int64
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("%05d", i), strconv.Itoa(i % 101)}
		sum += int64(i % 101)
	}
	f, err := s.AddFile(ctx, NewFile{Filename: "r.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("r", []string{"id", "n"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveTable(ctx, f.Tables[0].ID, catalog.LocationClickHouse); err != nil {
		t.Fatal(err)
	}
	// Every replica holds its shard's rows: the insert waited for both.
	onNodes, err := ch.ShardRows(ctx, &f.Tables[0])
	if err != nil {
		t.Fatal(err)
	}
	if onNodes[0] != onNodes[1] || onNodes[2] != onNodes[3] || onNodes[0]+onNodes[2] != int64(len(rows)) || onNodes[0] == 0 {
		t.Errorf("rows per node %v: want each shard's two replicas equal, and the shards' sum %d", onNodes, len(rows))
	}
	want := fmt.Sprintf("%d %d", len(rows), sum)
	ask := func() (string, error) {
		p, err := s.Plan(ctx, catalog.Query{FileID: f.ID, Aggregates: []catalog.Aggregate{{Op: "sum", Column: "n"}}})
		if err != nil {
			return "", err
		}
		res, err := s.Run(ctx, p)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d %v", res.MatchedRowCount, res.Aggregates["sum_n"]), nil
	}
	calls := keepAsking(t, []func() (string, error){ask, ask, ask}, want, func() {
		time.Sleep(300 * time.Millisecond)
		c.Kill(0)
		time.Sleep(1500 * time.Millisecond)
	})
	t.Logf("%d answers, a replica killed among them", calls)
	// Writes wait for every replica: with one down, a move to the cluster
	// says so, and the table stays whole where it was.
	g, err := s.AddFile(ctx, NewFile{Filename: "g.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("g", []string{"id"}, [][]string{{"1"}, {"2"}})}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveTable(ctx, g.Tables[0].ID, catalog.LocationClickHouse); datadesk.ErrorCode(err) != datadesk.Unavailable {
		t.Errorf("a move with a replica down: %v, want unavailable", err)
	}
	if tbl, err := s.Table(ctx, g.Tables[0].ID); err != nil || tbl.Location != catalog.LocationDuckDB {
		t.Errorf("the table after the failed move: %v %v", tbl, err)
	}
}
