package clickhouse

import (
	"errors"
	"net/url"
	"testing"
)

// TestDownSaysWhat: with ZooKeeper down, a move's error called it a shard
// ("shard 127.0.0.1:2181 is down"): ClickHouse's message names
// ZooKeeper's address. Each failure is now said as what it is.
func TestDownSaysWhat(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"clickhouse: http://127.0.0.1:8123: status 500: Code: 999, e.displayText() = Coordination::Exception: All connection tries failed while connecting to ZooKeeper. Addresses: 127.0.0.1:2181",
			"ClickHouse has lost ZooKeeper, without which replicated tables take no writes"},
		{"clickhouse: http://127.0.0.1:8123: status 500: Code: 242, e.displayText() = DB::Exception: Table is in readonly mode",
			"ClickHouse has lost ZooKeeper, without which replicated tables take no writes"},
		{"clickhouse: http://127.0.0.1:8123: status 500: Code: 279, e.displayText() = DB::NetException: All connection tries failed. Log: Connection refused (127.0.0.1:9001)",
			"shard 127.0.0.1:9001 is down"},
		{"clickhouse: http://127.0.0.1:8123: status 500: Code: 285, e.displayText() = DB::Exception: Number of alive replicas (1) is less than requested quorum (2)",
			"too many replicas of a shard are down for the write quorum"},
		{"clickhouse: http://127.0.0.1:8123: status 500: Code: 289, e.displayText() = DB::Exception: Replica doesn't have part all_1_1_0 which was successfully written to quorum of other replicas. Send query to another replica or disable 'select_sequential_consistency' setting.",
			"a replica is still catching up with the last write"},
	} {
		if got := (&Cluster{}).down(errors.New(tc.msg)); got != tc.want {
			t.Errorf("%.60s...: %q, want %q", tc.msg, got, tc.want)
		}
	}
}

// TestDownNamesTheShard: with both replicas of a shard down, the error
// named one replica's address as if it were the shard; with the
// cluster's layout read, it names the shard and every replica of it.
func TestDownNamesTheShard(t *testing.T) {
	c := &Cluster{cfg: Config{Replicas: 2, Nodes: []string{"http://a:8123", "http://b:8123", "http://c:8123", "http://d:8123"}}}
	c.version.shards = map[string]int{"127.0.0.1:9001": 1, "127.0.0.1:9002": 1, "127.0.0.1:9003": 2, "127.0.0.1:9004": 2}
	msg := "clickhouse: http://127.0.0.1:8123: status 500: Code: 279, e.displayText() = DB::NetException: All connection tries failed. Log: \n\n" +
		"Code: 210, e.displayText() = DB::NetException: Connection refused (127.0.0.1:9003)\nCode: 210, e.displayText() = DB::NetException: Connection refused (127.0.0.1:9004)"
	if got, want := c.down(errors.New(msg)), "shard 2 (127.0.0.1:9003, 127.0.0.1:9004) is down"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	ue := &url.Error{Op: "Post", URL: "http://c:8123/?query=SELECT", Err: errors.New("connection refused")}
	if got, want := c.down(ue), "node http://c:8123/, a replica of shard 2, cannot be reached"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Without replicas each node is a shard.
	c.cfg.Replicas, c.cfg.Nodes = 1, c.cfg.Nodes[:2]
	ue.URL = "http://b:8123/?query=SELECT"
	if got, want := c.down(ue), "shard 2 (http://b:8123/) cannot be reached"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
