package cluster_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/cluster"
	"datadesk/cluster/haproxytest"
	"datadesk/internal/testenv"
)

// TestRingMatchesHAProxy sends requests for many owners, by every kind of
// credential, through a real HAProxy to three loopback nodes that answer
// their name, and checks that each lands where the ring says.
func TestRingMatchesHAProxy(t *testing.T) {
	var list []string
	// Ids out of order and with gaps, as a list has after changes.
	for i, name := range []string{"a", "b", "c"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }))
		t.Cleanup(srv.Close)
		list = append(list, fmt.Sprintf("%s:%d=%s", name, []int{7, 2, 40}[i], strings.TrimPrefix(srv.URL, "http://")))
	}
	ring, err := cluster.ParseNodes(strings.Join(list, ","))
	if err != nil {
		t.Fatal(err)
	}
	addr, err := haproxytest.Start(t, ring)
	if errors.Is(err, haproxytest.ErrNoHAProxy) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	seen := map[string]int{}
	for i := range 60 {
		owner := datadesk.NewID("u")
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/files", nil)
		switch i % 4 {
		case 0:
			req.Header.Set("Authorization", "Bearer dd_"+owner+".c2VjcmV0")
		case 1:
			req.AddCookie(&http.Cookie{Name: "datadesk_session", Value: owner + ".c2VjcmV0"})
		case 2:
			req.URL.RawQuery = "t=abc&o=" + owner
		case 3:
			req.Header.Set("Authorization", "Bearer dd_"+datadesk.NewID("u")+".c2VjcmV0")
			req.Header.Set("X-On-Behalf-Of", owner)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if want := ring.Owner(owner).Name; string(got) != want {
			t.Errorf("owner %s (credential %d): proxy sent it to %q, ring says %q", owner, i%4, got, want)
		}
		seen[string(got)]++
	}
	if len(seen) != 3 {
		t.Errorf("owners reached %v; want all three nodes", seen)
	}
}

func TestParseNodes(t *testing.T) {
	for _, tc := range []struct {
		list  string
		names string
		ok    bool
	}{
		{"n1=127.0.0.1:1,n2=127.0.0.1:2", "n1,n2", true},
		{"127.0.0.1:1, 127.0.0.1:2", "n1,n2", true},
		{"a=127.0.0.1:1,a=127.0.0.1:2", "", false},
		{"a=nohost", "", false},
		{"b c=127.0.0.1:1", "", false},
		{"", "", false},
	} {
		ring, err := cluster.ParseNodes(tc.list)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.list, err, tc.ok)
			continue
		}
		if err != nil {
			continue
		}
		var names []string
		for i, n := range ring.Nodes() {
			names = append(names, n.Name)
			if n.ID != uint32(i+1) {
				t.Errorf("%q: node %s id %d, want %d", tc.list, n.Name, n.ID, i+1)
			}
		}
		if got := strings.Join(names, ","); got != tc.names {
			t.Errorf("%q: names %s, want %s", tc.list, got, tc.names)
		}
	}
}

// TestRingAddNode checks what consistent hashing promises: a new node
// takes owners only from the others, and about its share.
func TestRingAddNode(t *testing.T) {
	two, _ := cluster.ParseNodes("n1=127.0.0.1:1,n2=127.0.0.1:2")
	three, _ := cluster.ParseNodes("n1=127.0.0.1:1,n2=127.0.0.1:2,n3=127.0.0.1:3")
	moved := 0
	const owners = 3000
	for range owners {
		o := datadesk.NewID("u")
		before, after := two.Owner(o).Name, three.Owner(o).Name
		if before != after {
			if after != "n3" {
				t.Fatalf("owner %s moved from %s to %s; only moves to the new node are allowed", o, before, after)
			}
			moved++
		}
	}
	if share := float64(moved) / owners; share < 0.1 || share > 0.6 {
		t.Errorf("%d of %d owners moved (%.2f); want about a third", moved, owners, share)
	}
}

// TestRingSpread measures how evenly the ring spreads owners over 2 to 8
// nodes: every node's share is within 15% of an even share.
func TestRingSpread(t *testing.T) {
	const owners = 20000
	ids := make([]string, owners)
	for i := range ids {
		ids[i] = datadesk.NewID("u")
	}
	for n := 2; n <= 8; n++ {
		var list []string
		for i := 1; i <= n; i++ {
			list = append(list, fmt.Sprintf("n%d=127.0.0.1:%d", i, i))
		}
		ring, err := cluster.ParseNodes(strings.Join(list, ","))
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, id := range ids {
			count[ring.Owner(id).Name]++
		}
		lo, hi := owners, 0
		for _, c := range count {
			lo, hi = min(lo, c), max(hi, c)
		}
		even := float64(owners) / float64(n)
		t.Logf("%d nodes: shares from %.1f%% to %.1f%% (even %.1f%%)", n, 100*float64(lo)/owners, 100*float64(hi)/owners, 100/float64(n))
		if float64(lo) < 0.85*even || float64(hi) > 1.15*even {
			t.Errorf("%d nodes: shares from %d to %d owners, want within 15%% of %.0f", n, lo, hi, even)
		}
	}
}

// TestNodeIDs: ids written in the list are kept, a list on its own numbers
// the others by position, a list after another keeps every remaining
// node's id and gives a new one the next free id, and two nodes never
// share one.
func TestNodeIDs(t *testing.T) {
	four, err := cluster.ParseNodes("n1=h:1,n2=h:2,n3=h:3,n4=h:4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		list, after string
		want        string
		ok          bool
	}{
		{"n1=h:1,n2=h:2", "", "n1:1=h:1,n2:2=h:2", true},
		{"n1:7=h:1,n2=h:2", "", "n1:7=h:1,n2:2=h:2", true},
		{"n1=h:1,n3=h:3,n4=h:4", "four", "n1:1=h:1,n3:3=h:3,n4:4=h:4", true},
		{"n1=h:1,n3=h:3,n4=h:4,n5=h:5", "four", "n1:1=h:1,n3:3=h:3,n4:4=h:4,n5:5=h:5", true},
		{"n5=h:5,n1=h:1", "four", "n5:5=h:5,n1:1=h:1", true},
		{"n1:3=h:1,n3=h:3", "four", "", false},
		{"n1=h:1,n2:1=h:2", "", "", false},
		{"n1:0=h:1", "", "", false},
		{"n1:x=h:1", "", "", false},
		{fmt.Sprintf("n1:%d=h:1", cluster.MaxNodeID+1), "", "", false},
		{fmt.Sprintf("n1:%d=h:1,n9=h:9", cluster.MaxNodeID), "four", "", false},
	} {
		var ring *cluster.Ring
		var err error
		if tc.after == "four" {
			ring, err = cluster.ParseNodesAfter(tc.list, four)
		} else {
			ring, err = cluster.ParseNodes(tc.list)
		}
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.list, err, tc.ok)
			continue
		}
		if err == nil && ring.String() != tc.want {
			t.Errorf("%q: %s, want %s", tc.list, ring.String(), tc.want)
		}
		if err == nil {
			again, err := cluster.ParseNodes(ring.String())
			if err != nil || !again.Same(ring) {
				t.Errorf("%q: the list written, %s, reads back as %v (%v)", tc.list, ring.String(), again, err)
			}
		}
	}
}

// TestRingRemoveMiddleNode: removing any one node of four moves only its
// own owners, each to one of the nodes left.
func TestRingRemoveMiddleNode(t *testing.T) {
	four, _ := cluster.ParseNodes("n1=h:1,n2=h:2,n3=h:3,n4=h:4")
	owners := make([]string, 3000)
	for i := range owners {
		owners[i] = datadesk.NewID("u")
	}
	for _, gone := range []string{"n1", "n2", "n3", "n4"} {
		var rest []string
		for _, n := range four.Nodes() {
			if n.Name != gone {
				rest = append(rest, n.Name+"="+n.Addr)
			}
		}
		three, err := cluster.ParseNodesAfter(strings.Join(rest, ","), four)
		if err != nil {
			t.Fatal(err)
		}
		held, moved := 0, 0
		for _, o := range owners {
			before, after := four.Owner(o).Name, three.Owner(o).Name
			if before == gone {
				held++
			}
			if before != after {
				moved++
				if before != gone {
					t.Fatalf("removing %s moved owner %s from %s to %s", gone, o, before, after)
				}
			}
		}
		t.Logf("removing %s moved %d owners, the %d it held", gone, moved, held)
		if moved != held {
			t.Errorf("removing %s moved %d owners; it held %d", gone, moved, held)
		}
	}
}
