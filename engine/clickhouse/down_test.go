package clickhouse

import (
	"errors"
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
		if got := chDown(errors.New(tc.msg)); got != tc.want {
			t.Errorf("%.60s...: %q, want %q", tc.msg, got, tc.want)
		}
	}
}
