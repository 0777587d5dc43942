package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"datadesk/api"
	"datadesk/cluster"
	"datadesk/rbac"
)

// nodeFlags place a server among several nodes behind a proxy.
type nodeFlags struct {
	nodes  *string
	self   *string
	shared *string
}

func addNodeFlags(fs *flag.FlagSet) nodeFlags {
	return nodeFlags{
		nodes:  fs.String("nodes", envOr("DATADESK_NODES", ""), "member list of a cluster of nodes, name=host:port,... in the proxy's order (empty: one node alone)"),
		self:   fs.String("node", envOr("DATADESK_NODE", ""), "this node's name on --nodes"),
		shared: fs.String("shared", envOr("DATADESK_SHARED", ""), "directory every node shares for users, policy and keys (default: --data)"),
	}
}

// sharedDir is where users, policy and keys live: the shared directory of
// a cluster, or the data directory of a node alone.
func (f nodeFlags) sharedDir(data string) string {
	if f.shared != nil && *f.shared != "" {
		return *f.shared
	}
	return data
}

// apply sets the server's cluster configuration from the flags: nothing
// without --nodes; with it, this node's name and a shared directory are
// required, and the cluster key is read from (or made in) it.
func (f nodeFlags) apply(cfg *api.Config, data string) error {
	if f.nodes == nil || *f.nodes == "" {
		return nil
	}
	ring, err := cluster.ParseNodes(*f.nodes)
	if err != nil {
		return err
	}
	if _, ok := ring.Node(*f.self); !ok {
		return fmt.Errorf("--node %q must name one of --nodes", *f.self)
	}
	if *f.shared == "" {
		return errors.New("--nodes needs --shared: the directory where every node finds the same users, policy and keys")
	}
	if filepath.Clean(*f.shared) == filepath.Clean(data) {
		return errors.New("--shared must not be a node's --data: each node keeps its owners' databases apart")
	}
	key, err := readOrMakeKey(filepath.Join(*f.shared, "cluster.key"))
	if err != nil {
		return err
	}
	cfg.Cluster = api.ClusterConfig{Ring: ring, Self: *f.self, Key: key, Shared: *f.shared}
	return nil
}

// proxyConfig prints a HAProxy configuration for a member list.
func proxyConfig(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("proxy config", flag.ContinueOnError)
	nodes := fs.String("nodes", envOr("DATADESK_NODES", ""), "member list, name=host:port or name:id=host:port,... as the nodes are given it")
	bind := fs.String("bind", "127.0.0.1:8080", "the proxy's listen address")
	timeout := fs.Int("timeout", 300, "seconds a request may take at the proxy")
	stats := fs.String("stats", "127.0.0.1:8404", "where the proxy's stats page listens (keep it local)")
	shared := fs.String("shared", envOr("DATADESK_SHARED", ""), "the cluster's shared directory: nodes named without an id take theirs from the member list in force")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var inForce *cluster.Ring
	if *shared != "" {
		p, err := cluster.ReadPlacement(*shared)
		if err != nil {
			return err
		}
		if p != nil {
			if inForce, err = cluster.ParseNodes(p.Nodes); err != nil {
				return fmt.Errorf("proxy config: %s: %w", cluster.PlacementFile, err)
			}
		}
	}
	ring, err := cluster.ParseNodesAfter(*nodes, inForce)
	if err != nil {
		return err
	}
	out, err := cluster.HAProxyConfig(ring, cluster.ProxyConfig{Bind: *bind, Stats: *stats, Timeout: *timeout})
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, out)
	return err
}

// readOrMakeKey returns a key file's 32 or more bytes, creating the file
// with random bytes when it does not exist. Two nodes starting at once
// agree: the file is created exclusively and the loser reads the winner's.
func readOrMakeKey(p string) ([]byte, error) {
	key, err := os.ReadFile(p)
	if err == nil && len(key) >= 32 {
		return key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return nil, err
	}
	// A hard link fails if another process made the file first.
	if err := os.Link(tmp.Name(), p); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	key, err = os.ReadFile(p)
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("key file %s: %v", p, err)
	}
	return key, nil
}

// ownerWhere prints the node that holds an owner, by name or user id.
func ownerWhere(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("owner where", flag.ContinueOnError)
	nodes := fs.String("nodes", envOr("DATADESK_NODES", ""), "member list, name=host:port,... as the nodes are given it")
	shared := fs.String("shared", envOr("DATADESK_SHARED", "./shared"), "the cluster's shared directory, where users are (for a NAME)")
	who, rest := "", args
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		who, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if who == "" {
		return errors.New("owner where: a user NAME or id is needed")
	}
	ring, err := cluster.ParseNodes(*nodes)
	if err != nil {
		return err
	}
	id, name := who, ""
	if !cluster.IsOwnerID(who) {
		users, err := rbac.OpenUsers(*shared)
		if err != nil {
			return err
		}
		u, err := users.ByName(who)
		if err != nil {
			return err
		}
		id, name = u.ID, u.Name+" "
	}
	// A change of member list under way or done says where owners are.
	members, err := cluster.NewMembers(ring, *shared)
	if err != nil {
		return err
	}
	n, ok := members.Holder(id)
	if !ok {
		_, err = fmt.Fprintf(stdout, "%s(%s) is moving to node %s (%s)\n", name, id, n.Name, n.Addr)
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s(%s) is on node %s (%s)\n", name, id, n.Name, n.Addr)
	return err
}

// nodesPlan prints which owners a new member list moves, from which node
// to which, and how many owners each node holds before and after.
func nodesPlan(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nodes plan", flag.ContinueOnError)
	nodes := fs.String("nodes", envOr("DATADESK_NODES", ""), "the member list the nodes run with now")
	to := fs.String("to", "", "the new member list")
	shared := fs.String("shared", envOr("DATADESK_SHARED", "./shared"), "the cluster's shared directory, where users are")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Names in --nodes keep the ids of the list in force, if a change
	// made one.
	var inForce *cluster.Ring
	p, err := cluster.ReadPlacement(*shared)
	if err != nil {
		return err
	}
	if p != nil {
		if inForce, err = cluster.ParseNodes(p.Nodes); err != nil {
			return fmt.Errorf("nodes plan: %s: %w", cluster.PlacementFile, err)
		}
	}
	before, err := cluster.ParseNodesAfter(*nodes, inForce)
	if err != nil {
		return err
	}
	after, err := cluster.ParseNodesAfter(*to, before)
	if err != nil {
		return fmt.Errorf("nodes plan: --to: %w", err)
	}
	users, err := rbac.OpenUsers(*shared)
	if err != nil {
		return err
	}
	list, err := users.List()
	if err != nil {
		return err
	}
	countBefore, countAfter := map[string]int{}, map[string]int{}
	moves := 0
	for _, u := range list {
		a, b := before.Owner(u.ID), after.Owner(u.ID)
		countBefore[a.Name]++
		countAfter[b.Name]++
		if a.Name != b.Name {
			moves++
			fmt.Fprintf(stdout, "move %s (%s): %s -> %s\n", u.Name, u.ID, a.Name, b.Name)
		}
	}
	fmt.Fprintf(stdout, "%d of %d owners move\n", moves, len(list))
	fmt.Fprintf(stdout, "the new member list, with the ids that keep each node's owners: %s\n", after)
	for _, n := range after.Nodes() {
		fmt.Fprintf(stdout, "node %s (%s): %d owners, %d before\n", n.Name, n.Addr, countAfter[n.Name], countBefore[n.Name])
	}
	for _, n := range before.Nodes() {
		if _, ok := after.Node(n.Name); !ok {
			fmt.Fprintf(stdout, "node %s (%s) leaves: %d owners move off it\n", n.Name, n.Addr, countBefore[n.Name])
		}
	}
	return nil
}
