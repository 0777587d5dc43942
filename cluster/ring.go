// Package cluster spreads owners over several datadesk nodes behind
// HAProxy: the ring that says which node holds an owner, computed exactly
// as HAProxy's consistent hashing does, the owner key every credential
// carries, and the proxy configuration that routes on it.
package cluster

import (
	"fmt"
	"net"
	"sort"
	"strconv"
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

// MaxNodeID bounds a node's id so that HAProxy's key of its last point,
// id x ewghtRange + point, stays within the signed 32-bit number HAProxy
// computes it in.
const MaxNodeID = (1<<31)/ewghtRange - 1

// Node is one datadesk process: its name (the proxy's server name), its
// address, and its numeric id on the ring, written as the server's id in
// the proxy configuration. The id places the node's points on the ring, so
// a node keeps its id for as long as it is a member: a list written
// name:id=host:port says each; one written name=host:port numbers them by
// position, from 1, and a new list derived from the one in force
// (ParseNodesAfter) keeps every remaining node's id.
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

// ParseNodes reads a member list: comma-separated name=host:port,
// name:id=host:port, or host:port (named n1, n2... in order). A node
// without an id has its position, from 1.
func ParseNodes(list string) (*Ring, error) {
	return parseNodes(list, nil)
}

// ParseNodesAfter reads a new member list to replace current: a node
// without an id keeps its id in current if it is there, and a new one
// takes the next id no node of either list has. Removing a node then
// moves only its owners, and adding one only the owners its points take.
func ParseNodesAfter(list string, current *Ring) (*Ring, error) {
	return parseNodes(list, current)
}

func parseNodes(list string, current *Ring) (*Ring, error) {
	type entry struct {
		name, addr string
		id         uint32
	}
	var entries []entry
	seen := map[string]bool{}
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, addr, ok := strings.Cut(part, "=")
		if !ok {
			name, addr = fmt.Sprintf("n%d", len(entries)+1), part
		}
		var id uint32
		if n, idText, hasID := strings.Cut(name, ":"); hasID {
			v, err := strconv.ParseUint(idText, 10, 32)
			if err != nil || v < 1 || v > MaxNodeID {
				return nil, fmt.Errorf("cluster: node %q: the id after %s: must be a number from 1 to %d", part, n, MaxNodeID)
			}
			name, id = n, uint32(v)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("cluster: node %q: want host:port: %w", part, err)
		}
		if !validName(name) || seen[name] {
			return nil, fmt.Errorf("cluster: node name %q is empty, repeated or not letters, digits, '-' and '_'", name)
		}
		seen[name] = true
		entries = append(entries, entry{name, addr, id})
	}
	if len(entries) == 0 || len(entries) > MaxNodes {
		return nil, fmt.Errorf("cluster: want 1 to %d nodes, got %d", MaxNodes, len(entries))
	}
	// Ids: as written; else the current list's; else, for a list on its
	// own, the position; else the next one free.
	taken := map[uint32]string{}
	next := uint32(1)
	if current != nil {
		for _, n := range current.nodes {
			next = max(next, n.ID+1)
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.id == 0 && current != nil {
			if n, ok := current.Node(e.name); ok {
				e.id = n.ID
			}
		}
		if e.id == 0 && current == nil {
			e.id = uint32(i + 1)
		}
		if e.id != 0 {
			if other, dup := taken[e.id]; dup {
				return nil, fmt.Errorf("cluster: nodes %s and %s both have id %d; give each its own (name:id=host:port)", other, e.name, e.id)
			}
			taken[e.id] = e.name
			next = max(next, e.id+1)
		}
	}
	nodes := make([]Node, len(entries))
	for i, e := range entries {
		if e.id == 0 {
			for taken[next] != "" {
				next++
			}
			if next > MaxNodeID {
				return nil, fmt.Errorf("cluster: no id left for node %s: ids go up to %d; write the new node's id (name:id=host:port)", e.name, MaxNodeID)
			}
			e.id = next
			taken[next] = e.name
		}
		nodes[i] = Node{Name: e.name, Addr: e.addr, ID: e.id}
	}
	return NewRing(nodes), nil
}

// String writes the member list with every node's id, name:id=host:port,
// as the nodes and the proxy must be given it after a change.
func (r *Ring) String() string {
	parts := make([]string, len(r.nodes))
	for i, n := range r.nodes {
		parts[i] = n.Name + ":" + strconv.FormatUint(uint64(n.ID), 10) + "=" + n.Addr
	}
	return strings.Join(parts, ",")
}

// Same reports whether two member lists have the same nodes: names,
// addresses and ids, in any order.
func (r *Ring) Same(o *Ring) bool {
	if len(r.nodes) != len(o.nodes) {
		return false
	}
	for _, n := range r.nodes {
		if m, ok := o.Node(n.Name); !ok || m != n {
			return false
		}
	}
	return true
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
