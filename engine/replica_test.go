package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	t.Parallel()
	c, ch := startReplicated(t, 2, 2)
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
	// Answers before the kill, and many more after it, through the
	// failover to the other replica.
	calls := keepAskingCounted(t, []func() (string, error){ask, ask, ask}, want, func(answered func() int64) {
		waitAnswers(t, answered, 50)
		c.Kill(0)
		waitAnswers(t, answered, answered()+150)
	})
	t.Logf("%d answers, a replica killed among them", calls)
	// The replica down failed no call: the statements it failed ran on the
	// next node, counted as failovers, never as failed calls.
	if ch.Failures() != 0 || ch.Failovers() == 0 {
		t.Errorf("with a replica down and every answer right: %d failed calls and %d failovers, want 0 and some", ch.Failures(), ch.Failovers())
	}
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
	// Readiness is by shard: ready while each has a replica answering,
	// not once a shard has none.
	probe := func() map[string]error {
		out := map[string]error{}
		for _, ck := range catalog.RunProbes(ctx, ch.Probes(), 2*time.Second) {
			out[ck.Name[:min(len(ck.Name), len("clickhouse shard 1"))]] = ck.Err
		}
		return out
	}
	if got := probe(); got["clickhouse shard 1"] != nil || got["clickhouse shard 2"] != nil {
		t.Errorf("probes with a replica of shard 1 down: %v", got)
	}
	c.Kill(1)
	if got := probe(); got["clickhouse shard 1"] == nil || got["clickhouse shard 2"] != nil {
		t.Errorf("probes with shard 1 down: %v; want shard 1 blamed alone", got)
	}
	// A query and a move with both of shard 1's replicas down name the
	// shard, not one replica.
	_, err = ask()
	t.Logf("a query with shard 1 down: %v", err)
	if datadesk.ErrorCode(err) != datadesk.Unavailable || !strings.Contains(err.Error(), "shard 1 (") {
		t.Errorf("a query with shard 1 down: %v, want unavailable naming shard 1 and its replicas", err)
	}
	_, err = s.MoveTable(ctx, g.Tables[0].ID, catalog.LocationClickHouse)
	t.Logf("a move with shard 1 down: %v", err)
	if datadesk.ErrorCode(err) != datadesk.Unavailable || !strings.Contains(err.Error(), "no replica of shard 1 answers") {
		t.Errorf("a move with shard 1 down: %v, want unavailable saying no replica of shard 1 answers", err)
	}
}

// TestClickHouseWriteQuorum: three replicas of one shard, writes waiting
// for two. With the first replica down (where every write used to start),
// a table moves to the cluster and is counted whole, and a table dropped
// from the cluster goes. Back, the replica runs the changes it missed
// from ZooKeeper's queue and fetches the rows, while callers asking
// through every node get only right answers: until it has them it
// refuses reads, which run on another node.
func TestClickHouseWriteQuorum(t *testing.T) {
	c, ch := startReplicated(t, 1, 3)
	ctx := context.Background()
	e := newClusterEngine(t, ch, 0)
	s := acquire(t, e, datadesk.NewID("u"))
	add := func(name string, n int) (*catalog.File, int64) {
		rows := make([][]string, n)
		var sum int64
		for i := range rows {
			rows[i] = []string{fmt.Sprintf("%05d", i), strconv.Itoa(i % 101)}
			sum += int64(i % 101)
		}
		f, err := s.AddFile(ctx, NewFile{Filename: name + ".csv", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource(name, []string{"id", "n"}, rows)}})
		if err != nil {
			t.Fatal(err)
		}
		return f, sum
	}
	gone, _ := add("gone", 10)
	if _, err := s.MoveTable(ctx, gone.Tables[0].ID, catalog.LocationClickHouse); err != nil {
		t.Fatal(err)
	}

	c.Kill(0)
	// The shard still answers: a node is ready with one replica down.
	for _, ck := range catalog.RunProbes(ctx, ch.Probes(), 2*time.Second) {
		if ck.Err != nil {
			t.Errorf("probe %s with one replica of three down: %v", ck.Name, ck.Err)
		}
	}
	f, sum := add("kept", 5000)
	if _, err := s.MoveTable(ctx, f.Tables[0].ID, catalog.LocationClickHouse); err != nil {
		t.Fatalf("a move with one replica of three down: %v", err)
	}
	if err := s.DeleteFile(ctx, gone.ID); err != nil {
		t.Fatalf("a delete with one replica of three down: %v", err)
	}
	want := fmt.Sprintf("%d %d", 5000, sum)
	var clients []*clickhouse.Cluster
	ask := func(nodes []string) func() (string, error) {
		cl, err := clickhouse.New(clickhouse.Config{Nodes: nodes, Cluster: c.Name, Database: c.Database, Replicas: c.Replicas})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cl)
		tbl, err := s.Table(ctx, f.Tables[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		return func() (string, error) {
			p, err := s.Plan(ctx, catalog.Query{FileID: f.ID, Aggregates: []catalog.Aggregate{{Op: "sum", Column: "n"}}})
			if err != nil {
				return "", err
			}
			p.Table = tbl
			res, err := cl.Run(ctx, p)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d %v", res.MatchedRowCount, res.Aggregates["sum_n"]), nil
		}
	}
	// Each caller asks through its own first node, the one coming back
	// first among them.
	first := ask([]string{c.Nodes[0], c.Nodes[1], c.Nodes[2]})
	if got, err := ask(c.Nodes[1:])(); err != nil || got != want {
		t.Fatalf("with a replica down: %q %v, want %q", got, err, want)
	}
	calls := keepAsking(t, []func() (string, error){first, ask([]string{c.Nodes[1], c.Nodes[0], c.Nodes[2]}), ask([]string{c.Nodes[2], c.Nodes[0], c.Nodes[1]})}, want, func() {
		if err := c.Restart(0); err != nil {
			t.Error(err)
			return
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			rows, err := ch.ShardRows(ctx, &f.Tables[0])
			if err == nil && rows[0] == 5000 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("the replica back did not catch up within a minute: %v %v", rows, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	t.Logf("%d answers while the replica came back; statements its node refused (and another answered): %d", calls, clients[0].Failures())
	back, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes[:1], Cluster: c.Name, Database: c.Database, Replicas: c.Replicas})
	if err != nil {
		t.Fatal(err)
	}
	names, err := back.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, gone.Tables[0].ID) || slices.Contains(names, gone.Tables[0].ID+"_local") || !slices.Contains(names, f.Tables[0].ID) {
		t.Errorf("tables on the replica back: %v; want %s and not %s", names, f.Tables[0].ID, gone.Tables[0].ID)
	}
}

// startReplicated starts ZooKeeper and a cluster of shards with replicas
// each, stopped when the test ends, and a client of every node.
func startReplicated(t *testing.T, shards, replicas int) (*clickhousetest.Cluster, *clickhouse.Cluster) {
	t.Helper()
	c, err := clickhousetest.StartReplicated(shards, replicas)
	if errors.Is(err, clickhousetest.ErrNoServer) || errors.Is(err, clickhousetest.ErrNoZooKeeper) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: c.Database, Replicas: c.Replicas})
	if err != nil {
		t.Fatal(err)
	}
	return c, ch
}
