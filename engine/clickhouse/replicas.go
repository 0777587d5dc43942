package clickhouse

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"datadesk"
)

// quorum is how many replicas of a shard a write waits for: the
// configured WriteQuorum, else a majority (both of two, two of three).
// Without replicas it is 1.
func (c *Cluster) quorum() int {
	r := max(c.cfg.Replicas, 1)
	if c.cfg.WriteQuorum > 0 {
		return min(c.cfg.WriteQuorum, r)
	}
	return r/2 + 1
}

// partialQuorum says whether writes wait for fewer than every replica:
// a replica may then lack the last write for a while, and reads must not
// count on it (select_sequential_consistency).
func (c *Cluster) partialQuorum() bool { return c.quorum() < max(c.cfg.Replicas, 1) }

// readSettings are the settings of every read: with a partial quorum, a
// replica that lacks a write made with the quorum refuses to answer
// (REPLICA_IS_NOT_IN_QUORUM), and the read runs again on another node,
// instead of counting without those rows.
func (c *Cluster) readSettings(v url.Values) url.Values {
	if c.partialQuorum() {
		v.Set("select_sequential_consistency", "1")
	}
	return v
}

// ddl runs a DDL statement on every node; on(clause) writes the
// statement with clause after the name it acts on. Without replicas
// each node runs it in turn. With replicas ZooKeeper's distributed DDL
// queue carries it (ON CLUSTER): a replica that is down runs it, in
// order, when it is back. The queue is not waited on; instead done tells
// whether a node shows the statement's effect, and ddl returns once every
// node that answers does. Errors: unavailable when a shard has fewer
// nodes answering than the write quorum, or when they do not show it
// within replicaWait.
func (c *Cluster) ddl(ctx context.Context, on func(clause string) string, done func(ctx context.Context, node string) (bool, error)) error {
	if c.cfg.Replicas <= 1 {
		return c.execAll(ctx, on(""))
	}
	// The statement is queued through the first node that reaches
	// ZooKeeper: one that does not cannot queue it.
	node, err := c.firstNode(ctx, "SELECT count() FROM system.zookeeper WHERE path = '/'")
	if err != nil {
		return err
	}
	resp, err := c.request(ctx, node, on(" ON CLUSTER "+chIdent(c.cfg.Cluster)), nil,
		url.Values{"distributed_ddl_task_timeout": {"0"}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return c.waitNodes(ctx, done)
}

// waitNodes waits until done holds on every node that answers, each
// shard keeping at least the write quorum of them. Each pass asks every
// node still pending, so a shard below its quorum is named with every
// replica of it that does not answer.
func (c *Cluster) waitNodes(ctx context.Context, done func(ctx context.Context, node string) (bool, error)) error {
	deadline := time.Now().Add(replicaWait)
	pending := append([]string(nil), c.cfg.Nodes...)
	down := make([][]string, c.shards())
	for len(pending) > 0 {
		var still []string
		var last error
		for _, n := range pending {
			ok, err := done(attempt(ctx), n)
			switch {
			case datadesk.ErrorCode(err) == datadesk.Unavailable:
				// The node does not answer: it runs the change from the
				// queue when it is back.
				s := c.shardOf(n)
				down[s], last = append(down[s], n), err
				c.failover(ctx)
			case err != nil:
				c.failed(ctx)
				return err
			case !ok:
				still = append(still, n)
			}
		}
		for s, nodes := range down {
			if c.cfg.Replicas-len(nodes) < c.quorum() {
				c.failed(ctx)
				return c.belowQuorum(s, nodes).WithCause(last)
			}
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			c.failed(ctx)
			return datadesk.Errorf(datadesk.Unavailable, "ClickHouse at %s did not apply a change to its tables within %s; is ZooKeeper up?", pending[0], replicaWait)
		}
		select {
		case <-ctx.Done():
			return c.classify(ctx, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// belowQuorum is the error of shard s (from 0) with the replicas down
// not answering, fewer left than writes wait for.
func (c *Cluster) belowQuorum(s int, down []string) *datadesk.Error {
	up := c.cfg.Replicas - len(down)
	what := fmt.Sprintf("%d of shard %d's %d replicas answer (%s down)", up, s+1, c.cfg.Replicas, strings.Join(down, ", "))
	if up == 0 {
		what = fmt.Sprintf("no replica of shard %d answers (%s)", s+1, strings.Join(down, ", "))
	}
	return datadesk.Errorf(datadesk.Unavailable, "the ClickHouse cluster cannot answer: %s, and writes wait for %d; try again when they are back", what, c.quorum())
}

// shards is how many shards the nodes make.
func (c *Cluster) shards() int { return max(len(c.cfg.Nodes)/max(c.cfg.Replicas, 1), 1) }

// shardOf is the shard (from 0) of node n: Nodes lists shard 1's
// replicas, then shard 2's.
func (c *Cluster) shardOf(n string) int {
	for i, m := range c.cfg.Nodes {
		if m == n {
			return i / max(c.cfg.Replicas, 1)
		}
	}
	return 0
}

// hasTable is a done function of ddl: whether node has table name
// (present) or not (!present).
func (c *Cluster) hasTable(name string, present bool) func(ctx context.Context, node string) (bool, error) {
	stmt := "SELECT count() FROM system.tables WHERE database = " + chLiteral(c.cfg.Database) + " AND name = " + chLiteral(name)
	return func(ctx context.Context, node string) (bool, error) {
		rows, err := c.allOnce(ctx, []string{node}, stmt)
		if err != nil {
			return false, err
		}
		return (rows[0][0].(int64) > 0) == present, nil
	}
}

// hasDatabase is ddl's done function for the cluster's database.
func (c *Cluster) hasDatabase(ctx context.Context, node string) (bool, error) {
	rows, err := c.allOnce(ctx, []string{node}, "SELECT count() FROM system.databases WHERE name = "+chLiteral(c.cfg.Database))
	if err != nil {
		return false, err
	}
	return rows[0][0].(int64) > 0, nil
}

// liveNode is the first node that answers: where a write starts, so
// that the first node down does not stop it.
func (c *Cluster) liveNode(ctx context.Context) (string, error) {
	return c.firstNode(ctx, "SELECT 1")
}

// firstNode is the first node that runs stmt.
func (c *Cluster) firstNode(ctx context.Context, stmt string) (string, error) {
	var err error
	for i, n := range c.cfg.Nodes {
		if err = c.execOn(attempt(ctx), n, stmt); err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return "", c.classify(ctx, ctx.Err())
		}
		if i < len(c.cfg.Nodes)-1 {
			c.failover(ctx)
		}
	}
	c.failed(ctx)
	return "", err
}

// elsewhere says whether another node may answer what failed with err:
// this one is down or lost a shard, or, with replicas, it is a replica
// still catching up, which lacks the last write or has not yet made a
// table ZooKeeper's queue holds for it (UNKNOWN_TABLE).
func (c *Cluster) elsewhere(err error) bool {
	if datadesk.ErrorCode(err) == datadesk.Unavailable {
		return true
	}
	return c.cfg.Replicas > 1 && strings.Contains(err.Error(), "Code: 60,")
}
