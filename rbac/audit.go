package rbac

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"datadesk"
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
//
// No call runs without its record: the file keeps space allocated past its
// end (fallocate, the file's size unchanged), so a record written into it
// cannot fail for want of space, and Ready, asked before a call runs,
// refuses the call when that space runs low and no more can be had (a
// full disk). The calls already running have room for their records.
type Audit struct {
	path string
	mu   sync.Mutex
	f    *os.File
	// size is the file's length; allocated, how far space is allocated
	// for it; reserve, the space Ready keeps allocated past size.
	size, allocated, reserve int64
	// unreserved: the file system cannot allocate ahead (no fallocate);
	// records are then written as they come.
	unreserved bool
}

// DefaultAuditReserve is the space the audit log keeps allocated ahead of
// its records: about 10,000 records.
const DefaultAuditReserve = 4 << 20

// OpenAudit opens (or creates) dir/audit.jsonl for appending, keeping
// DefaultAuditReserve allocated ahead.
func OpenAudit(dir string) (*Audit, error) {
	return OpenAuditReserving(dir, DefaultAuditReserve)
}

// OpenAuditReserving is OpenAudit keeping reserve bytes allocated ahead.
func OpenAuditReserving(dir string, reserve int64) (*Audit, error) {
	p := filepath.Join(dir, "audit.jsonl")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rbac: audit: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("rbac: audit: %w", err)
	}
	a := &Audit{path: p, f: f, size: st.Size(), allocated: st.Size(), reserve: max(reserve, 64<<10)}
	_ = a.Ready() // a full disk at start is reported at the first call
	return a, nil
}

// Ready reports whether a call may run: whether its record has room. It
// allocates more space when less than half the reserve is left; when none
// can be had, calls go on while a quarter of it is left (the calls running
// have theirs), and are refused after. Errors: unavailable, saying the
// disk is full.
func (a *Audit) Ready() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.unreserved || a.allocated-a.size >= a.reserve/2 {
		return nil
	}
	err := allocate(a.f, a.size, a.reserve)
	if errors.Is(err, syscall.EINTR) {
		err = allocate(a.f, a.size, a.reserve)
	}
	switch {
	case err == nil:
		a.allocated = a.size + a.reserve
		return nil
	case errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS):
		a.unreserved = true
		return nil
	case a.allocated-a.size >= a.reserve/4:
		return nil
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return datadesk.Errorf(datadesk.Unavailable, "the audit log cannot be written: the disk is full; no call runs without its record").WithCause(fmt.Errorf("%w: %w", ErrNoRoom, err))
	}
	return datadesk.Errorf(datadesk.Unavailable, "the audit log cannot be written (%v); no call runs without its record", err).WithCause(fmt.Errorf("%w: %w", ErrNoRoom, err))
}

// ErrNoRoom is the cause of Ready's refusals: a call refused so is not
// recorded, since its record would take the room of the calls running.
var ErrNoRoom = errors.New("rbac: the audit log has no room")

// Record appends one entry, as one write.
func (a *Audit) Record(e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n, err := a.f.Write(append(b, '\n'))
	a.size += int64(n)
	a.allocated = max(a.allocated, a.size)
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
