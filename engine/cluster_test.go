package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"testing"
	"time"

	"datadesk/engine/clickhouse"
	"datadesk/engine/clickhousetest"
	"datadesk/internal/testenv"
)

// The local ClickHouse cluster of two shards, started once per test run by
// the first test that needs it and stopped by TestMain.
var testCluster struct {
	once sync.Once
	c    *clickhousetest.Cluster
	err  error
}

// stopTestCluster stops the cluster if a test started it.
func stopTestCluster() {
	if testCluster.c != nil {
		testCluster.c.Stop()
	}
}

// testClickHouse returns a client of the local cluster, starting it on
// first use; the test is skipped only when no server binary is installed.
// Each test has a database of its own on it, so that tests run side by
// side and one that counts the cluster's tables sees its own alone.
func testClickHouse(t testing.TB) *clickhouse.Cluster {
	t.Helper()
	testCluster.once.Do(func() { testCluster.c, testCluster.err = clickhousetest.Start(2) })
	if errors.Is(testCluster.err, clickhousetest.ErrNoServer) {
		testenv.Missing(t, "%v", testCluster.err)
	}
	if testCluster.err != nil {
		t.Fatal(testCluster.err)
	}
	c := testCluster.c
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: fmt.Sprintf("%s_%x", c.Database, h.Sum64())})
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ch
}

// newClusterEngine is newEngine with the cluster as its remote backend.
func newClusterEngine(t *testing.T, ch *clickhouse.Cluster, minRows int64) *Engine {
	t.Helper()
	e, err := New(Config{Dir: t.TempDir(), MemoryLimit: "256MB", MaxTempSize: "1GB", Remote: ch, RemoteMinRows: minRows,
		RetireAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
