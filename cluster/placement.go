package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// PlacementFile is where, in the shared directory, a change of member list
// is recorded while its owners move and after.
const PlacementFile = "placement.json"

// Move states: a waiting owner is still on its old node; a moving one is on
// none (its calls answer 503 for the moment of the copy). A finished move
// leaves the list.
const (
	MoveWaiting = "waiting"
	MoveMoving  = "moving"
)

// Placement is a change of member list: the list the nodes ran with
// (From), the list in force (Nodes), and the owners whose move has not
// finished. Every node and `datadesk nodes apply` read it from the shared
// directory; only the apply command writes it.
type Placement struct {
	Version int64           `json:"version"`
	From    string          `json:"from"`
	Nodes   string          `json:"nodes"`
	Moves   map[string]Move `json:"moves"`
}

// Move is one owner's move between two nodes, by name.
type Move struct {
	From  string `json:"from"`
	To    string `json:"to"`
	State string `json:"state"`
}

// LockPlacement takes the lock that lets one change of member list run at
// a time in shared directory dir; unlock gives it back. It fails at once
// when another holds it.
func LockPlacement(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".placement.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another change of member list is running on %s; wait for it to end", dir)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// ReadPlacement reads the placement in dir; nil when there is none.
func ReadPlacement(dir string) (*Placement, error) {
	b, err := os.ReadFile(filepath.Join(dir, PlacementFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p Placement
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("cluster: %s does not read: %w", PlacementFile, err)
	}
	if p.Moves == nil {
		p.Moves = map[string]Move{}
	}
	return &p, nil
}

// WritePlacement replaces the placement in dir at once, one version past
// the one it had.
func WritePlacement(dir string, p *Placement) error {
	p.Version++
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".placement-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, PlacementFile))
}

// Members is a node's live view of where owners are: the member list it
// started with until a placement says otherwise. It rereads the placement
// when asked to (Reload) and at most once a second otherwise.
type Members struct {
	base *Ring
	dir  string

	mu      sync.RWMutex
	ring    *Ring
	from    *Ring
	moves   map[string]Move
	modTime time.Time
	checked atomic.Int64
}

// NewMembers returns the view of a node started with member list base,
// reading placements from the shared directory dir (none when empty).
func NewMembers(base *Ring, dir string) (*Members, error) {
	m := &Members{base: base, dir: dir, ring: base, from: base}
	if _, err := m.Reload(); err != nil {
		return nil, err
	}
	return m, nil
}

// Reload reads the placement again and returns its version (0: none).
func (m *Members) Reload() (int64, error) {
	m.checked.Store(time.Now().UnixNano())
	if m.dir == "" {
		return 0, nil
	}
	st, err := os.Stat(filepath.Join(m.dir, PlacementFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	p, err := ReadPlacement(m.dir)
	if err != nil || p == nil {
		return 0, err
	}
	ring, err := ParseNodes(p.Nodes)
	if err != nil {
		return 0, fmt.Errorf("cluster: %s: nodes: %w", PlacementFile, err)
	}
	from := ring
	if p.From != "" {
		if from, err = ParseNodes(p.From); err != nil {
			return 0, fmt.Errorf("cluster: %s: from: %w", PlacementFile, err)
		}
	}
	m.mu.Lock()
	m.ring, m.from, m.moves, m.modTime = ring, from, p.Moves, st.ModTime()
	m.mu.Unlock()
	return p.Version, nil
}

// fresh rereads the placement when it changed and a second has passed
// since it was last looked at.
func (m *Members) fresh() {
	now := time.Now().UnixNano()
	last := m.checked.Load()
	if m.dir == "" || now-last < int64(time.Second) || !m.checked.CompareAndSwap(last, now) {
		return
	}
	st, err := os.Stat(filepath.Join(m.dir, PlacementFile))
	m.mu.RLock()
	changed := err == nil && !st.ModTime().Equal(m.modTime)
	m.mu.RUnlock()
	if changed {
		_, _ = m.Reload()
	}
}

// Holder returns the node that holds owner now. ok is false while the
// owner moves: no node holds it, and n is the node it moves to.
func (m *Members) Holder(owner string) (n Node, ok bool) {
	m.fresh()
	m.mu.RLock()
	defer m.mu.RUnlock()
	if mv, found := m.moves[owner]; found {
		if mv.State == MoveWaiting {
			if n, ok := m.node(mv.From); ok {
				return n, true
			}
		}
		n, _ := m.node(mv.To)
		return n, false
	}
	return m.ring.Owner(owner), true
}

// Before returns the node the member list before the change gives owner:
// where a proxy that has not been given the new list sends its requests.
func (m *Members) Before(owner string) Node {
	m.fresh()
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.from.Owner(owner)
}

// Node returns the node of that name on either member list.
func (m *Members) Node(name string) (Node, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.node(name)
}

func (m *Members) node(name string) (Node, bool) {
	if n, ok := m.ring.Node(name); ok {
		return n, true
	}
	if n, ok := m.from.Node(name); ok {
		return n, true
	}
	return m.base.Node(name)
}

// Nodes returns every node of the member list in force and, while owners
// still move, of the one before it, each once: the nodes that may hold
// owners' calls.
func (m *Members) Nodes() []Node {
	m.fresh()
	m.mu.RLock()
	defer m.mu.RUnlock()
	rings := []*Ring{m.ring}
	if len(m.moves) > 0 {
		rings = append(rings, m.from)
	}
	var out []Node
	for _, r := range rings {
		for _, n := range r.Nodes() {
			if !slices.ContainsFunc(out, func(o Node) bool { return o.Name == n.Name }) {
				out = append(out, n)
			}
		}
	}
	return out
}
