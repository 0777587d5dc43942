package clickhouse

import (
	"context"
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

// serverVersion is the cluster's Version, read once.
type serverVersion struct {
	mu    sync.Mutex
	known bool
	v     Version
}

// DetectVersion reads the version of every node that answers, once: the
// analyses then use window functions when every one has them (ClickHouse
// 21.9 and later), and arrays otherwise (ClickHouse 18.16). The server
// calls it at start-up; a cluster that does not answer then is asked
// again at the first analysis that needs to know. Errors: unavailable
// when no node answers.
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
