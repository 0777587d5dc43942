package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"datadesk/cluster"
	"datadesk/handoff"
	"datadesk/rbac"
)

// applier moves owners between running nodes for a new member list.
type applier struct {
	shared string
	key    string
	drain  time.Duration
	from   *cluster.Ring
	to     *cluster.Ring
	plan   *cluster.Placement
	http   *http.Client
	out    io.Writer
	// done: the change asked for is the one already in force.
	done bool
}

// nodesApply moves the owners a new member list gives to other nodes, one
// at a time, while every node serves: each owner is unavailable (503,
// Retry-After) only while its own folder, sessions and approvals are
// copied. The placement in the shared directory records every step, so a
// run that stops midway is finished by running it again.
func nodesApply(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nodes apply", flag.ContinueOnError)
	nodes := fs.String("nodes", envOr("DATADESK_NODES", ""), "the member list the nodes run with now")
	to := fs.String("to", "", "the new member list; every node on it must be running")
	shared := fs.String("shared", envOr("DATADESK_SHARED", "./shared"), "the cluster's shared directory, where users, keys and the placement are")
	drain := fs.Duration("drain", 30*time.Second, "how long an owner's move waits for its running calls before it is given up")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a := &applier{shared: *shared, drain: *drain, out: stdout, http: &http.Client{Timeout: 0}}
	key, err := readOrMakeKey(filepath.Join(*shared, "cluster.key"))
	if err != nil {
		return err
	}
	a.key = hex.EncodeToString(key)
	unlock, err := cluster.LockPlacement(*shared)
	if err != nil {
		return err
	}
	defer unlock()
	if err := a.start(*nodes, *to); err != nil {
		return err
	}
	if a.done {
		return nil
	}
	ctx := context.Background()
	if err := a.publish(ctx); err != nil {
		return err
	}
	owners := make([]string, 0, len(a.plan.Moves))
	for id := range a.plan.Moves {
		owners = append(owners, id)
	}
	slices.Sort(owners)
	for _, id := range owners {
		if err := a.move(ctx, id); err != nil {
			return fmt.Errorf("nodes apply: moving %s: %w (run the command again to go on; owners moved so far stay moved)", id, err)
		}
	}
	fmt.Fprintf(stdout, "%d owners moved; the member list is %s\n", len(owners), a.to)
	fmt.Fprintf(stdout, "now give the proxy the new list (datadesk proxy config --nodes %s) and reload it, and start nodes with it; until then the old nodes pass moved owners' requests on\n", a.to)
	return nil
}

// start reads the placement and sets out the moves: a new one from the
// users and the two member lists, or the one a stopped run left. The
// lists are read against the one in force, so a node named without its id
// keeps it (cluster.ParseNodesAfter).
func (a *applier) start(nodes, to string) error {
	p, err := cluster.ReadPlacement(a.shared)
	if err != nil {
		return err
	}
	var inForce, before *cluster.Ring
	if p != nil {
		if inForce, err = cluster.ParseNodes(p.Nodes); err != nil {
			return fmt.Errorf("nodes apply: %s: %w", cluster.PlacementFile, err)
		}
		if p.From != "" {
			if before, err = cluster.ParseNodes(p.From); err != nil {
				return fmt.Errorf("nodes apply: %s: %w", cluster.PlacementFile, err)
			}
		}
	}
	// The change placement.json records, asked for again: its lists are
	// read against the list it started from, as they were the first time
	// (or --to may be the list in force as written).
	if before != nil {
		from, ferr := cluster.ParseNodesAfter(nodes, before)
		again, terr := cluster.ParseNodesAfter(to, before)
		same := terr == nil && again.Same(inForce)
		if !same {
			again, terr = cluster.ParseNodesAfter(to, inForce)
			same = terr == nil && again.Same(inForce)
		}
		switch {
		case same && len(p.Moves) > 0:
			a.from, a.to, a.plan = before, inForce, p
			fmt.Fprintf(a.out, "going on with the change from %s: %d owners to move\n", p.From, len(p.Moves))
			return nil
		case same && ferr == nil && from.Same(before):
			// Run again after it finished: nothing left to do, and so done.
			fmt.Fprintf(a.out, "the change from %s to %s is already done\n", p.From, p.Nodes)
			a.done = true
			return nil
		}
	}
	if p != nil && len(p.Moves) > 0 {
		return fmt.Errorf("nodes apply: a change to %s is under way (%d owners to move); finish it first with --to %s", p.Nodes, len(p.Moves), p.Nodes)
	}
	// A new change, from the list in force.
	if a.from, err = cluster.ParseNodesAfter(nodes, inForce); err != nil {
		return err
	}
	if a.to, err = cluster.ParseNodesAfter(to, a.from); err != nil {
		return fmt.Errorf("nodes apply: --to: %w", err)
	}
	if p != nil && !inForce.Same(a.from) {
		return fmt.Errorf("nodes apply: the member list in force is %s (%s), not --nodes %s", p.Nodes, cluster.PlacementFile, nodes)
	}
	users, err := rbac.OpenUsers(a.shared)
	if err != nil {
		return err
	}
	list, err := users.List()
	if err != nil {
		return err
	}
	a.plan = &cluster.Placement{From: a.from.String(), Nodes: a.to.String(), Moves: map[string]cluster.Move{}}
	if p != nil {
		a.plan.Version = p.Version
	}
	for _, u := range list {
		if f, t := a.from.Owner(u.ID), a.to.Owner(u.ID); f.Name != t.Name {
			a.plan.Moves[u.ID] = cluster.Move{From: f.Name, To: t.Name, State: cluster.MoveWaiting}
		}
	}
	fmt.Fprintf(a.out, "%d of %d owners move\n", len(a.plan.Moves), len(list))
	return nil
}

// publish writes the placement and has every node of both lists read it
// before anything else happens: a node that cannot be reached stops the
// run, since it would go on sending calls by the old placement.
func (a *applier) publish(ctx context.Context) error {
	if err := cluster.WritePlacement(a.shared, a.plan); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, r := range []*cluster.Ring{a.from, a.to} {
		for _, n := range r.Nodes() {
			if seen[n.Name] {
				continue
			}
			seen[n.Name] = true
			var ans struct {
				Version int64 `json:"version"`
			}
			if err := a.call(ctx, n, http.MethodPost, "/v1/cluster/placement", nil, &ans); err != nil {
				return err
			}
			if ans.Version != a.plan.Version {
				return fmt.Errorf("node %s holds placement %d, not %d: does it share %s?", n.Name, ans.Version, a.plan.Version, a.shared)
			}
		}
	}
	return nil
}

// move moves one owner: no node holds it while its stream goes from the
// old node to the new one; then the new one does, and the old one forgets
// it. A failure before the switch puts the owner back where it was.
func (a *applier) move(ctx context.Context, owner string) error {
	mv := a.plan.Moves[owner]
	from, _ := a.from.Node(mv.From)
	if n, ok := a.to.Node(mv.From); ok {
		from = n
	}
	to, _ := a.to.Node(mv.To)
	mv.State = cluster.MoveMoving
	a.plan.Moves[owner] = mv
	if err := a.publish(ctx); err != nil {
		return err
	}
	began := time.Now()
	sum, err := a.copyOwner(ctx, owner, from, to)
	if err != nil {
		mv.State = cluster.MoveWaiting
		a.plan.Moves[owner] = mv
		return errors.Join(err, a.call(ctx, from, http.MethodPost, "/v1/cluster/owners/"+owner+"/resume", nil, nil), a.publish(ctx))
	}
	delete(a.plan.Moves, owner)
	if err := a.publish(ctx); err != nil {
		return err
	}
	paused := time.Since(began)
	if err := a.call(ctx, from, http.MethodPost, "/v1/cluster/owners/"+owner+"/release", nil, nil); err != nil {
		fmt.Fprintf(a.out, "node %s keeps a copy of %s it no longer uses (%v); run the release again or remove it by hand\n", from.Name, owner, err)
	}
	fmt.Fprintf(a.out, "moved %s: %s -> %s, %d files (%d bytes), %d sessions, %d approvals (%d pending), paused %d ms\n",
		owner, from.Name, to.Name, sum.Files, sum.Bytes, sum.Sessions, sum.Approvals, sum.Pending, paused.Milliseconds())
	return nil
}

// copyOwner streams the owner from the old node straight into the new one.
func (a *applier) copyOwner(ctx context.Context, owner string, from, to cluster.Node) (handoff.Summary, error) {
	var sum handoff.Summary
	path := "/v1/cluster/owners/" + owner + "/archive"
	req, err := a.request(ctx, from, http.MethodGet, path+"?drain="+a.drain.String(), nil)
	if err != nil {
		return sum, err
	}
	res, err := a.http.Do(req)
	if err != nil {
		return sum, fmt.Errorf("node %s cannot be reached: %w", from.Name, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return sum, answerError(from, res)
	}
	err = a.call(ctx, to, http.MethodPut, path, res.Body, &sum)
	return sum, err
}

func (a *applier) request(ctx context.Context, n cluster.Node, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+n.Addr+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Datadesk-Cluster-Key", a.key)
	return req, nil
}

// call sends a request to a node and reads its JSON answer into out.
func (a *applier) call(ctx context.Context, n cluster.Node, method, path string, body io.Reader, out any) error {
	req, err := a.request(ctx, n, method, path, body)
	if err != nil {
		return err
	}
	res, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("node %s (%s) cannot be reached: %w", n.Name, n.Addr, err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return answerError(n, res)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(res.Body).Decode(out)
}

// answerError reads a node's error answer.
func answerError(n cluster.Node, res *http.Response) error {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return fmt.Errorf("node %s answered %d: %s", n.Name, res.StatusCode, e.Error.Message)
	}
	return fmt.Errorf("node %s answered %d", n.Name, res.StatusCode)
}
