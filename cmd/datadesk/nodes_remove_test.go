package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"datadesk/cluster"
	"datadesk/rbac"
)

// TestNodesApplyRemovesAMiddleNode: taking the middle node out of three
// moves its owners and no other; the list in force keeps every remaining
// node's id, which the proxy configuration and the nodes are given, and
// each owner's file is on the node that list says.
func TestNodesApplyRemovesAMiddleNode(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	var addrs []string
	for range 3 {
		a, err := cluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	three := "n1=" + addrs[0] + ",n2=" + addrs[1] + ",n3=" + addrs[2]
	two := "n1=" + addrs[0] + ",n3=" + addrs[2] // as an operator writes it, without ids
	ringThree, _ := cluster.ParseNodes(three)
	users, err := rbac.OpenUsers(shared)
	if err != nil {
		t.Fatal(err)
	}
	type owner struct{ name, id, token, before, file string }
	var owners []*owner
	onN2 := 0
	for i := 0; i < 24; i++ {
		u, token, err := users.Add(fmt.Sprintf("an%d", i), "analyst")
		if err != nil {
			t.Fatal(err)
		}
		o := &owner{name: u.Name, id: u.ID, token: token, before: ringThree.Owner(u.ID).Name}
		if o.before == "n2" {
			onN2++
		}
		owners = append(owners, o)
	}
	if onN2 == 0 || onN2 == len(owners) {
		t.Fatalf("%d of %d owners on n2; the test needs some on it and some off", onN2, len(owners))
	}
	for i, n := range []string{"n1", "n2", "n3"} {
		startNode(t, n, addrs[i], three, shared)
	}
	httpc := &http.Client{Timeout: 30 * time.Second}
	addrOf := map[string]string{"n1": addrs[0], "n2": addrs[1], "n3": addrs[2]}
	for _, o := range owners {
		c := client{t: t, base: "http://" + addrOf[o.before], token: o.token, http: httpc}
		code, m := c.upload(o.name+".csv", []byte("id,n\n007,1\n"))
		if code != http.StatusCreated {
			t.Fatalf("%s's upload on %s: %d %v", o.name, o.before, code, m)
		}
		o.file = m["file"].(map[string]any)["id"].(string)
	}

	var out bytes.Buffer
	if err := run([]string{"nodes", "plan", "--nodes", three, "--to", two, "--shared", shared}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	want := "n1:1=" + addrs[0] + ",n3:3=" + addrs[2]
	if !strings.Contains(out.String(), fmt.Sprintf("%d of %d owners move", onN2, len(owners))) || !strings.Contains(out.String(), want) {
		t.Errorf("nodes plan says:\n%s\nwant %d of %d owners moving and the list %s", out.String(), onN2, len(owners), want)
	}
	out.Reset()
	if err := run([]string{"nodes", "apply", "--nodes", three, "--to", two, "--shared", shared}, &out, io.Discard); err != nil {
		t.Fatalf("nodes apply: %v\n%s", err, out.String())
	}
	moved := regexp.MustCompile(`(?m)^moved (u_[a-z2-7]+): (\w+) -> (\w+),`).FindAllStringSubmatch(out.String(), -1)
	if len(moved) != onN2 {
		t.Errorf("%d owners moved, want the %d on n2:\n%s", len(moved), onN2, out.String())
	}
	for _, m := range moved {
		if m[2] != "n2" {
			t.Errorf("owner %s moved off %s, which stays", m[1], m[2])
		}
	}
	p, err := cluster.ReadPlacement(shared)
	if err != nil || p == nil || p.Nodes != want {
		t.Fatalf("placement %+v (%v), want the list in force %s", p, err, want)
	}
	var proxy bytes.Buffer
	// The list as written, ids taken from the list in force.
	if err := run([]string{"proxy", "config", "--nodes", two, "--shared", shared}, &proxy, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^  server n3 abns@\S+ id 3 weight`).MatchString(proxy.String()) {
		t.Errorf("the proxy's ring does not keep n3's id 3:\n%s", proxy.String())
	}
	// The same command again, as a script would rerun it: done.
	out.Reset()
	if err := run([]string{"nodes", "apply", "--nodes", three, "--to", two, "--shared", shared}, &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), "already done") {
		t.Errorf("the same removal again: %v\n%s", err, out.String())
	}
	// Every owner's file is on the node the new list gives it, and that is
	// its old node unless it was on n2.
	after, _ := cluster.ParseNodes(p.Nodes)
	for _, o := range owners {
		node := after.Owner(o.id).Name
		if o.before != "n2" && node != o.before {
			t.Errorf("%s was on %s and is now given to %s", o.name, o.before, node)
		}
		c := client{t: t, base: "http://" + addrOf[node], token: o.token, http: httpc}
		if code, m, _ := c.do("GET", "/v1/files/"+o.file, nil, ""); code != http.StatusOK {
			t.Errorf("%s's file on %s: %d %v", o.name, node, code, m)
		}
	}
}
