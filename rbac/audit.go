package rbac

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Entry is one audited decision and call.
type Entry struct {
	Time        time.Time `json:"time"`
	UserID      string    `json:"user_id,omitempty"`
	User        string    `json:"user,omitempty"`
	ActorID     string    `json:"actor_id,omitempty"`
	Actor       string    `json:"actor,omitempty"`
	ChatSession string    `json:"chat_session_id,omitempty"`
	Action      string    `json:"action"`
	Decision    string    `json:"decision,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Outcome     string    `json:"outcome"`
	Status      int       `json:"status,omitempty"`
	DurationMS  float64   `json:"duration_ms"`
	ArgsSHA256  string    `json:"args_sha256,omitempty"`
	ApprovalID  string    `json:"approval_id,omitempty"`
	Target      string    `json:"target,omitempty"`
}

// Audit appends entries to a JSON Lines file in the data directory, so that
// the CLI reads it while the server writes.
type Audit struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// OpenAudit opens (or creates) dir/audit.jsonl for appending.
func OpenAudit(dir string) (*Audit, error) {
	p := filepath.Join(dir, "audit.jsonl")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rbac: audit: %w", err)
	}
	return &Audit{path: p, f: f}, nil
}

// Record appends one entry, as one write.
func (a *Audit) Record(e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err = a.f.Write(append(b, '\n'))
	return err
}

// Close closes the file.
func (a *Audit) Close() error { return a.f.Close() }

// ReadAudit returns the newest entries of the audit file in dir, newest
// first: at most limit, of one user (by name or id) when user is set.
func ReadAudit(dir, user string, limit int) ([]Entry, error) {
	f, err := os.Open(filepath.Join(dir, "audit.jsonl"))
	if os.IsNotExist(err) {
		return []Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rbac: audit: %w", err)
	}
	defer f.Close()
	var all []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line cut by a crash
		}
		if user == "" || e.User == user || e.UserID == user || e.Actor == user || e.ActorID == user {
			all = append(all, e)
		}
	}
	out := []Entry{}
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, all[i])
	}
	return out, sc.Err()
}
