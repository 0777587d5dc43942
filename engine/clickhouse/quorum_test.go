package clickhouse

import "testing"

// TestWriteQuorum: a majority by default, the configured quorum within
// the replicas, and a quorum that would leave counts short refused.
func TestWriteQuorum(t *testing.T) {
	for _, tc := range []struct {
		replicas, quorum int
		want             int
		partial, refused bool
	}{
		{replicas: 1, want: 1},
		{replicas: 2, want: 2},
		{replicas: 3, want: 2, partial: true},
		{replicas: 3, quorum: 3, want: 3},
		{replicas: 5, want: 3, partial: true},
		{replicas: 3, quorum: 1, refused: true},
		{replicas: 3, quorum: 4, refused: true},
		{replicas: 2, quorum: -1, refused: true},
	} {
		c, err := New(Config{Nodes: []string{"http://127.0.0.1:8123"}, Cluster: "c", Database: "d", Replicas: tc.replicas, WriteQuorum: tc.quorum})
		if tc.refused {
			if err == nil {
				t.Errorf("%d replicas, quorum %d: accepted", tc.replicas, tc.quorum)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d replicas, quorum %d: %v", tc.replicas, tc.quorum, err)
		}
		if c.quorum() != tc.want || c.partialQuorum() != tc.partial {
			t.Errorf("%d replicas, quorum %d: %d (partial %v), want %d (%v)", tc.replicas, tc.quorum, c.quorum(), c.partialQuorum(), tc.want, tc.partial)
		}
		if got := c.insertSettings().Get("select_sequential_consistency") == "1"; got != tc.partial {
			t.Errorf("%d replicas, quorum %d: sequential reads %v", tc.replicas, tc.quorum, got)
		}
	}
}
