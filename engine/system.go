package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk"
)

// System is the server's own database: calls waiting for approval and web
// sessions. It lives in the data directory beside the owners' databases.
type System struct {
	db *sql.DB
	// mu makes each approval's state change a single step, so that two
	// approvers at the same moment can never both run a call.
	mu sync.Mutex
}

var systemDDL = []string{
	`CREATE TABLE IF NOT EXISTS approvals (
		id VARCHAR PRIMARY KEY,
		tool VARCHAR NOT NULL,
		arguments VARCHAR NOT NULL,
		user_id VARCHAR NOT NULL,
		user_name VARCHAR NOT NULL,
		role VARCHAR NOT NULL,
		actor_id VARCHAR NOT NULL,
		actor_name VARCHAR NOT NULL,
		chat_session_id VARCHAR NOT NULL,
		reason VARCHAR NOT NULL,
		status VARCHAR NOT NULL,
		created_at TIMESTAMP NOT NULL,
		expires_at TIMESTAMP NOT NULL,
		decided_by VARCHAR,
		decided_at TIMESTAMP,
		result VARCHAR,
		error_code VARCHAR,
		error_message VARCHAR)`,
	`CREATE TABLE IF NOT EXISTS sessions (
		token_hash VARCHAR PRIMARY KEY,
		user_id VARCHAR NOT NULL,
		csrf VARCHAR NOT NULL,
		created_at TIMESTAMP NOT NULL,
		expires_at TIMESTAMP NOT NULL,
		revoked BOOLEAN NOT NULL)`,
	// A call that was running when the server stopped did not finish; it
	// is marked failed rather than run again.
	`UPDATE approvals SET status = 'failed', error_code = 'internal', error_message = 'the server stopped while the call ran' WHERE status = 'running'`,
}

// OpenSystem opens (or creates) the system database in cfg.Dir.
func OpenSystem(ctx context.Context, cfg Config) (*System, error) {
	cfg.setDefaults()
	connector, err := duckdb.NewConnector(dsn(cfg, filepath.Join(cfg.Dir, "system.duckdb")), nil)
	if err != nil {
		return nil, fmt.Errorf("engine: system database: %w", err)
	}
	s := &System{db: sql.OpenDB(connector)}
	for _, stmt := range systemDDL {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			s.db.Close()
			return nil, fmt.Errorf("engine: system database: %w", err)
		}
	}
	return s, nil
}

// Close closes the system database.
func (s *System) Close() error { return s.db.Close() }

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalRunning  = "running"
	ApprovalDone     = "done"
	ApprovalFailed   = "failed"
	ApprovalRejected = "rejected"
	ApprovalExpired  = "expired"
)

// Approval is a call waiting for a person, or what became of it.
type Approval struct {
	ID          string          `json:"id"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	UserID      string          `json:"user_id"`
	UserName    string          `json:"user_name"`
	Role        string          `json:"-"`
	ActorID     string          `json:"actor_id,omitempty"`
	ActorName   string          `json:"actor_name,omitempty"`
	ChatSession string          `json:"chat_session_id"`
	Reason      string          `json:"reason"`
	Status      string          `json:"status"`
	CreatedAt   time.Time       `json:"created_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
	DecidedBy   string          `json:"decided_by,omitempty"`
	DecidedAt   *time.Time      `json:"decided_at,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	ErrorCode   string          `json:"error_code,omitempty"`
	ErrorMsg    string          `json:"error_message,omitempty"`
}

const approvalColumns = `id, tool, arguments, user_id, user_name, role, actor_id, actor_name, chat_session_id, reason, status,
	created_at, expires_at, decided_by, decided_at, result, error_code, error_message`

// AddApproval stores a call that waits for approval.
func (s *System) AddApproval(ctx context.Context, a *Approval) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL)`,
		a.ID, a.Tool, string(a.Arguments), a.UserID, a.UserName, a.Role, a.ActorID, a.ActorName, a.ChatSession, a.Reason, a.Status,
		a.CreatedAt, a.ExpiresAt)
	return classify(ctx, err)
}

func scanApproval(row interface{ Scan(...any) error }, now time.Time) (*Approval, error) {
	var a Approval
	var args string
	var decidedBy, result, code, msg sql.NullString
	var decidedAt sql.NullTime
	if err := row.Scan(&a.ID, &a.Tool, &args, &a.UserID, &a.UserName, &a.Role, &a.ActorID, &a.ActorName, &a.ChatSession, &a.Reason,
		&a.Status, &a.CreatedAt, &a.ExpiresAt, &decidedBy, &decidedAt, &result, &code, &msg); err != nil {
		return nil, err
	}
	a.Arguments = json.RawMessage(args)
	a.DecidedBy, a.ErrorCode, a.ErrorMsg = decidedBy.String, code.String, msg.String
	if decidedAt.Valid {
		a.DecidedAt = &decidedAt.Time
	}
	if result.Valid {
		a.Result = json.RawMessage(result.String)
	}
	if a.Status == ApprovalPending && now.After(a.ExpiresAt) {
		a.Status = ApprovalExpired
	}
	return &a, nil
}

// Approval returns one approval. Errors: not_found.
func (s *System) Approval(ctx context.Context, id string, now time.Time) (*Approval, error) {
	a, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id), now)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, datadesk.Errorf(datadesk.NotFound, "no approval with id %q", id).WithField("id")
	}
	if err != nil {
		return nil, classify(ctx, err)
	}
	return a, nil
}

// Approvals lists approvals, newest first: of one user when userID is set,
// with one status when status is set.
func (s *System) Approvals(ctx context.Context, userID, status string, limit int, now time.Time) ([]Approval, error) {
	q := `SELECT ` + approvalColumns + ` FROM approvals WHERE (? = '' OR user_id = ?) ORDER BY created_at DESC, id LIMIT ?`
	rows, err := s.db.QueryContext(ctx, q, userID, userID, limit*4+100)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	out := []Approval{}
	for rows.Next() {
		a, err := scanApproval(rows, now)
		if err != nil {
			return nil, classify(ctx, err)
		}
		if status == "" || a.Status == status {
			out = append(out, *a)
		}
		if len(out) == limit {
			break
		}
	}
	return out, rows.Err()
}

// DecideApproval moves a pending approval to running (approve) or rejected,
// in one step under a lock, so a call is claimed at most once. Errors:
// not_found, conflict (already decided, or expired).
func (s *System) DecideApproval(ctx context.Context, id, by string, approve bool, now time.Time) (*Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.Approval(ctx, id, now)
	if err != nil {
		return nil, err
	}
	if a.Status != ApprovalPending {
		return nil, datadesk.Errorf(datadesk.Conflict, "approval %s is %s; only a pending call can be decided", id, a.Status).WithField("id")
	}
	status := ApprovalRejected
	if approve {
		status = ApprovalRunning
	}
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'`,
		status, by, now, id)
	if err != nil {
		return nil, classify(ctx, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, datadesk.Errorf(datadesk.Conflict, "approval %s was decided meanwhile", id).WithField("id")
	}
	a.Status, a.DecidedBy, a.DecidedAt = status, by, &now
	return a, nil
}

// FinishApproval records the outcome of an approved call.
func (s *System) FinishApproval(ctx context.Context, id string, result json.RawMessage, code, msg string) error {
	status, res := ApprovalDone, sql.NullString{String: string(result), Valid: result != nil}
	if code != "" {
		status = ApprovalFailed
	}
	_, err := s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE approvals SET status = ?, result = ?, error_code = ?, error_message = ? WHERE id = ?`,
		status, res, code, msg, id)
	return classify(ctx, err)
}

// Session is a signed-in web session.
type Session struct {
	UserID    string
	CSRF      string
	ExpiresAt time.Time
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateSession starts a session for a user and returns its cookie token;
// only the token's hash is stored.
func (s *System) CreateSession(ctx context.Context, userID string, now time.Time, ttl time.Duration) (string, *Session, error) {
	token := randomToken()
	sess := &Session{UserID: userID, CSRF: randomToken(), ExpiresAt: now.Add(ttl)}
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions VALUES (?, ?, ?, ?, ?, false)`, tokenHash(token), userID, sess.CSRF, now, sess.ExpiresAt)
	if err != nil {
		return "", nil, classify(ctx, err)
	}
	return token, sess, nil
}

// Session returns the live session of a cookie token.
// Errors: unauthenticated (unknown, expired or signed out).
func (s *System) Session(ctx context.Context, token string, now time.Time) (*Session, error) {
	var sess Session
	var revoked bool
	err := s.db.QueryRowContext(ctx, `SELECT user_id, csrf, expires_at, revoked FROM sessions WHERE token_hash = ?`, tokenHash(token)).
		Scan(&sess.UserID, &sess.CSRF, &sess.ExpiresAt, &revoked)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && revoked:
		return nil, datadesk.Errorf(datadesk.Unauthenticated, "the session has ended; sign in again")
	case err != nil:
		return nil, classify(ctx, err)
	case now.After(sess.ExpiresAt):
		return nil, datadesk.Errorf(datadesk.Unauthenticated, "the session expired; sign in again")
	}
	return &sess, nil
}

// RevokeSession ends a session.
func (s *System) RevokeSession(ctx context.Context, token string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET revoked = true WHERE token_hash = ?`, tokenHash(token))
	return classify(ctx, err)
}
