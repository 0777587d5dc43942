// Package cluster spreads owners over several datadesk nodes behind
// HAProxy: the ring that says which node holds an owner, computed exactly
// as HAProxy's consistent hashing does, the owner key every credential
// carries, and the proxy configuration that routes on it.
package cluster

import (
	"fmt"
	"net"
	"sort"
	"strings"
)

// HAProxy's consistent-hash constants (src/lb_chash.c, include/haproxy/
// backend-t.h and server-t.h): a server of weight w appears 16w times on
// the ring (BE_WEIGHT_SCALE x w), at full_hash(id*ewghtRange + i). With
// weight 1 (16 points) two nodes split owners 43/57 and four 19-29%; at
// weight 64 (1,024 points) the spread stays within a few percent of even
// (TestRingSpread). Every node has the same weight, written as the
// server's weight in the proxy configuration.
const (
	ServerWeight   = 64
	nodesPerServer = 16 * ServerWeight
	ewghtRange     = 256 * 16 // SRV_EWGHT_RANGE = SRV_UWGHT_RANGE x BE_WEIGHT_SCALE
)

// MaxNodes bounds a member list: each node is a server line in the proxy.
const MaxNodes = 64

// Node is one datadesk process: its name (the proxy's server name), its
// address, and its numeric id on the ring (its position in the list,
// from 1, written as the server's id in the proxy configuration).
type Node struct {
	Name string
	Addr string
	ID   uint32
}

// Ring is the member list every node and the proxy share.
type Ring struct {
	nodes  []Node
	points []point
}

type point struct {
	key  uint32
	node int
}

// ParseNodes reads a member list: comma-separated name=host:port (or
// host:port, named n1, n2... in order).
func ParseNodes(list string) (*Ring, error) {
	var nodes []Node
	seen := map[string]bool{}
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, addr, ok := strings.Cut(part, "=")
		if !ok {
			name, addr = fmt.Sprintf("n%d", len(nodes)+1), part
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("cluster: node %q: want host:port: %w", part, err)
		}
		if !validName(name) || seen[name] {
			return nil, fmt.Errorf("cluster: node name %q is empty, repeated or not letters, digits, '-' and '_'", name)
		}
		seen[name] = true
		nodes = append(nodes, Node{Name: name, Addr: addr, ID: uint32(len(nodes) + 1)})
	}
	if len(nodes) == 0 || len(nodes) > MaxNodes {
		return nil, fmt.Errorf("cluster: want 1 to %d nodes, got %d", MaxNodes, len(nodes))
	}
	return NewRing(nodes), nil
}

func validName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// NewRing places every node on the ring as HAProxy places a server of
// weight ServerWeight with `hash-type consistent`.
func NewRing(nodes []Node) *Ring {
	r := &Ring{nodes: nodes}
	for i, n := range nodes {
		for j := range uint32(nodesPerServer) {
			r.points = append(r.points, point{key: fullHash(n.ID*ewghtRange + j), node: i})
		}
	}
	sort.Slice(r.points, func(a, b int) bool { return r.points[a].key < r.points[b].key })
	return r
}

// Nodes returns the member list.
func (r *Ring) Nodes() []Node { return r.nodes }

// Node returns the node of a name.
func (r *Ring) Node(name string) (Node, bool) {
	for _, n := range r.nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// Owner returns the node an owner's requests go to: HAProxy hashes the key
// with sdbm, spreads it with the avalanche hash (`hash-type consistent sdbm
// avalanche`, written out in the configuration so that no version's
// default matters), and takes the closest point on the ring, the one
// before on a tie (chash_get_server_hash).
func (r *Ring) Owner(owner string) Node {
	h := fullHash(sdbm(owner))
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i].key >= h })
	if i == len(r.points) {
		i = 0
	}
	next := r.points[i]
	prev := r.points[(i+len(r.points)-1)%len(r.points)]
	if next.node == prev.node {
		return r.nodes[next.node]
	}
	if h-prev.key <= next.key-h {
		return r.nodes[prev.node]
	}
	return r.nodes[next.node]
}

// sdbm is HAProxy's default hash function (hash_sdbm in src/hash.c).
func sdbm(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h = uint32(s[i]) + (h << 6) + (h << 16) - h
	}
	return h
}

// fullHash is Bob Jenkins' integer hash, then a multiplication, with which
// HAProxy places servers (__full_hash in include/haproxy/intops.h).
func fullHash(a uint32) uint32 {
	a = (a + 0x7ed55d16) + (a << 12)
	a = (a ^ 0xc761c23c) ^ (a >> 19)
	a = (a + 0x165667b1) + (a << 5)
	a = (a + 0xd3a2646c) ^ (a << 9)
	a = (a + 0xfd7046c5) + (a << 3)
	a = (a ^ 0xb55a4f09) ^ (a >> 16)
	// Spread over the whole ring by a large prime near 3/4 of it.
	return a * 3221225473
}
