package clickhouse

import (
	"flag"
	"os"
	"strings"
)

// Flags say where a ClickHouse cluster is, as the commands that talk to
// one take them. The password comes from the environment only
// (DATADESK_CLICKHOUSE_PASSWORD), so it never shows in a process list.
type Flags struct {
	nodes, cluster, db, user *string
	replicas, quorum         *int
}

// AddFlags defines --clickhouse, --clickhouse-cluster, --clickhouse-db,
// --clickhouse-user, --clickhouse-replicas and --clickhouse-write-quorum on fs, each defaulting to
// its DATADESK_ environment variable.
func AddFlags(fs *flag.FlagSet) Flags {
	env := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	return Flags{
		nodes:    fs.String("clickhouse", env("DATADESK_CLICKHOUSE", ""), "comma-separated HTTP URLs of every ClickHouse shard (empty: no cluster)"),
		cluster:  fs.String("clickhouse-cluster", env("DATADESK_CLICKHOUSE_CLUSTER", "datadesk"), "cluster name in the servers' remote_servers"),
		db:       fs.String("clickhouse-db", env("DATADESK_CLICKHOUSE_DB", "datadesk"), "ClickHouse database for tables"),
		user:     fs.String("clickhouse-user", env("DATADESK_CLICKHOUSE_USER", "default"), "ClickHouse user (password: DATADESK_CLICKHOUSE_PASSWORD)"),
		replicas: fs.Int("clickhouse-replicas", 1, "replicas of each shard (more than 1: ReplicatedMergeTree through ZooKeeper; --clickhouse lists every replica)"),
		quorum:   fs.Int("clickhouse-write-quorum", 0, "replicas of a shard each write waits for (0: a majority, both of two, two of three)"),
	}
}

// Client returns the cluster the flags name, nil when they name none.
func (f Flags) Client() (*Cluster, error) {
	var nodes []string
	for _, n := range strings.Split(*f.nodes, ",") {
		if n = strings.TrimSpace(n); n != "" {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	return New(Config{Nodes: nodes, Cluster: *f.cluster, Database: *f.db, Replicas: *f.replicas, WriteQuorum: *f.quorum,
		User: *f.user, Password: os.Getenv("DATADESK_CLICKHOUSE_PASSWORD")})
}
