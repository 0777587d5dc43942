package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// windowFnsSince is the first ClickHouse release whose window functions
// are ready for use (21.9; 21.3 to 21.8 had them as an experiment).
var windowFnsSince = [2]int{21, 9}

// Version is what the cluster's servers are.
type Version struct {
	// Name is each answering node's version, such as 18.16.1.
	Name string
	// WindowFunctions: every one has window functions (21.9 and later).
	WindowFunctions bool
}

// serverVersion is the cluster's Version, read once, and its layout:
// the shard (from 1) of each replica's address, host:port as the
// servers' remote_servers name it and as its IP address.
type serverVersion struct {
	mu     sync.Mutex
	known  bool
	v      Version
	shards map[string]int
}

// shardOf names the one shard the addresses of an error belong to, with
// every address of its replicas, or "" when they name none or several.
func (v *serverVersion) shardOf(addrs []string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	shard := 0
	for _, a := range addrs {
		if s, ok := v.shards[a]; ok {
			if shard != 0 && s != shard {
				return ""
			}
			shard = s
		}
	}
	if shard == 0 {
		return ""
	}
	var replicas []string
	for a, s := range v.shards {
		if s == shard && !slices.Contains(replicas, a) {
			replicas = append(replicas, a)
		}
	}
	slices.Sort(replicas)
	return fmt.Sprintf("shard %d (%s)", shard, strings.Join(replicas, ", "))
}

// DetectVersion reads the version of every node that answers, once: the
// analyses then use window functions when every one has them (ClickHouse
// 21.9 and later), and arrays otherwise (ClickHouse 18.16). It reads the
// cluster's layout too, so that a shard down is named with its replicas.
// The server calls it at start-up; a cluster that does not answer then
// is asked again at the first analysis that needs to know. Errors:
// unavailable when no node answers.
func (c *Cluster) DetectVersion(ctx context.Context) (Version, error) {
	v := &c.version
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.known {
		return v.v, nil
	}
	var names []string
	fns := true
	var last error
	// Not a caller's statement: a node down here is no failed call.
	ctx = context.WithValue(ctx, probeKey{}, true)
	for _, n := range c.cfg.Nodes {
		rows, err := c.allOnce(ctx, []string{n}, "SELECT version()")
		if err != nil {
			last = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		name := rows[0][0].(string)
		names = append(names, name)
		fns = fns && hasWindowFns(name)
	}
	if len(names) == 0 {
		return Version{}, last
	}
	rows, err := c.all(ctx, "SELECT host_name, host_address, port, shard_num FROM system.clusters WHERE cluster = "+chLiteral(c.cfg.Cluster))
	if err != nil {
		return Version{}, err
	}
	v.shards = map[string]int{}
	for _, r := range rows {
		port, shard := strconv.FormatInt(r[2].(int64), 10), int(r[3].(int64))
		v.shards[r[0].(string)+":"+port], v.shards[r[1].(string)+":"+port] = shard, shard
	}
	v.known, v.v = true, Version{Name: strings.Join(names, ", "), WindowFunctions: fns}
	return v.v, nil
}

// WindowFunctions reports whether the cluster's servers have window
// functions, asking them on first use. Errors: unavailable.
func (c *Cluster) WindowFunctions(ctx context.Context) (bool, error) {
	v, err := c.DetectVersion(ctx)
	return v.WindowFunctions, err
}

// hasWindowFns reports whether a server of version name (such as
// 18.16.1 or 24.8.4.13) has window functions ready for use.
func hasWindowFns(name string) bool {
	parts := strings.SplitN(name, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > windowFnsSince[0] || major == windowFnsSince[0] && minor >= windowFnsSince[1]
}
