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
	for _, name := range []string{"a", "b", "c"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }))
		t.Cleanup(srv.Close)
		list = append(list, name+"="+strings.TrimPrefix(srv.URL, "http://"))
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
