// Package serverdb is the server's own database, apart from every owner's:
// calls waiting for a person's approval (with their arguments, their
// decision and their result) and web sessions. The API's approval and
// sign-in handlers are its only users. It runs in a small DuckDB instance
// of its own, so that no owner's statement can reach it.
package serverdb

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
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk"
)

// DB is the server's own database: calls waiting for approval and web
// sessions. It lives in the data directory beside the owners' databases; a
// pending call's large arguments are files of their own under
// Dir/approvals/, so the queue stays small however big the calls are.
type DB struct {
	db      *sql.DB
	argsDir string
	// mu makes each approval's state change a single step, so that two
	// approvers at the same moment can never both run a call, and a user's
	// pending quota is checked and taken at once.
	mu sync.Mutex
}

// InlineArgsMax is the largest arguments kept in the queue's own table;
// larger ones are stored apart, as a file.
const InlineArgsMax = 16 << 10

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
	// The size of a call's arguments, its rows, and whether the arguments
	// are a file of their own (added to queues made before these existed).
	`ALTER TABLE approvals ADD COLUMN IF NOT EXISTS args_bytes BIGINT DEFAULT 0`,
	`ALTER TABLE approvals ADD COLUMN IF NOT EXISTS args_rows BIGINT DEFAULT 0`,
	`ALTER TABLE approvals ADD COLUMN IF NOT EXISTS args_apart BOOLEAN DEFAULT false`,
	// The files a call makes or reads, named for the queue.
	`ALTER TABLE approvals ADD COLUMN IF NOT EXISTS target VARCHAR DEFAULT ''`,
	`CREATE TABLE IF NOT EXISTS sessions (
		token_hash VARCHAR PRIMARY KEY,
		user_id VARCHAR NOT NULL,
		csrf VARCHAR NOT NULL,
		created_at TIMESTAMP NOT NULL,
		expires_at TIMESTAMP NOT NULL,
		revoked BOOLEAN NOT NULL)`,
	// A session belongs to one of its user's epochs, which a new password
	// or revoked tokens end.
	`ALTER TABLE sessions ADD COLUMN IF NOT EXISTS epoch BIGINT DEFAULT 0`,
	// A call that was running when the server stopped did not finish; it
	// is marked failed rather than run again.
	`UPDATE approvals SET status = 'failed', error_code = 'internal', error_message = 'the server stopped while the call ran' WHERE status = 'running'`,
	// Queues from before arguments were stored apart kept every call's
	// arguments inline; a decided call's are no longer needed.
	`UPDATE approvals SET arguments = '' WHERE status <> 'pending' AND arguments <> ''`,
}

// dsn opens the database at path in a small instance of its own: it holds
// small rows (approvals' summaries and sessions), and no owner's statement
// can reach it.
func dsn(path string) string {
	q := url.Values{}
	q.Set("enable_external_access", "false")
	q.Set("autoload_known_extensions", "false")
	q.Set("autoinstall_known_extensions", "false")
	q.Set("threads", "1")
	q.Set("memory_limit", "64MB")
	q.Set("max_temp_directory_size", "256MB")
	q.Set("lock_configuration", "true")
	return path + "?" + q.Encode()
}

// dbError turns a database or context error into the project's error
// model: a deadline or a cancelled request is a timeout.
func dbError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var de *datadesk.Error
	switch {
	case errors.As(err, &de):
		return err
	case errors.Is(err, context.DeadlineExceeded), ctx.Err() != nil:
		return datadesk.Errorf(datadesk.Timeout, "the operation took longer than allowed").WithCause(err)
	}
	return fmt.Errorf("serverdb: %w", err)
}

// Open opens (or creates) the server's database in data directory dir,
// in a small DuckDB instance of its own.
func Open(ctx context.Context, dir string) (*DB, error) {
	connector, err := duckdb.NewConnector(dsn(filepath.Join(dir, "system.duckdb")), nil)
	if err != nil {
		return nil, fmt.Errorf("serverdb: %w", err)
	}
	s := &DB{db: sql.OpenDB(connector), argsDir: filepath.Join(dir, "approvals")}
	if err := os.MkdirAll(s.argsDir, 0o700); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("serverdb: %w", err)
	}
	for _, stmt := range systemDDL {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			s.db.Close()
			return nil, fmt.Errorf("serverdb: %w", err)
		}
	}
	s.mu.Lock()
	err = s.sweep(ctx, time.Now())
	s.mu.Unlock()
	if err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the system database.
func (s *DB) Close() error { return s.db.Close() }

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalRunning  = "running"
	ApprovalDone     = "done"
	ApprovalFailed   = "failed"
	ApprovalRejected = "rejected"
	ApprovalExpired  = "expired"
	// ApprovalDenied is a call the policy denied when it was approved: a
	// rule changed since it was asked for.
	ApprovalDenied = "denied"
)

// ApprovalStatuses are the statuses a list can be filtered by.
var ApprovalStatuses = []string{ApprovalPending, ApprovalRunning, ApprovalDone, ApprovalFailed, ApprovalRejected, ApprovalExpired, ApprovalDenied}

// Approval is a call waiting for a person, or what became of it. Lists
// carry its summary only: Arguments and Result are read with one approval.
type Approval struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	UserID    string `json:"user_id"`
	UserName  string `json:"user_name"`
	Role      string `json:"-"`
	ActorID   string `json:"actor_id,omitempty"`
	ActorName string `json:"actor_name,omitempty"`
	// Rows and Bytes say how big the call is: its table rows and the size
	// of its arguments as JSON.
	Rows        int64  `json:"rows"`
	Bytes       int64  `json:"bytes"`
	ChatSession string `json:"chat_session_id"`
	Reason      string `json:"reason"`
	// Target names the files the call makes or reads ("makes
	// targets.xlsx", "reads orders.csv").
	Target    string     `json:"target,omitempty"`
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	DecidedBy string     `json:"decided_by,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	// Arguments are the call's arguments, given with one approval when
	// they are at most InlineArgsMax bytes; larger ones stay on the server
	// (ArgumentsApart) and are read only to run the call.
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	ArgumentsApart bool            `json:"arguments_stored_apart,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	ErrorCode      string          `json:"error_code,omitempty"`
	ErrorMsg       string          `json:"error_message,omitempty"`
}

// PendingQuota bounds what one user may have waiting for approval.
type PendingQuota struct {
	// CallBytes bounds one call's arguments; Bytes and Calls bound the
	// sum over a user's pending calls.
	CallBytes int64
	Bytes     int64
	Calls     int
}

const summaryColumns = `id, tool, user_id, user_name, role, actor_id, actor_name, args_rows, args_bytes, args_apart, chat_session_id, reason,
	coalesce(target, ''), status, created_at, expires_at, decided_by, decided_at, error_code, error_message`

// AddApproval stores a call that waits for approval, within the user's
// quota; arguments larger than InlineArgsMax are written to a file of their
// own first. Errors: too_large, naming the limit that was reached.
func (s *DB) AddApproval(ctx context.Context, a *Approval, q PendingQuota) error {
	a.Bytes = int64(len(a.Arguments))
	if q.CallBytes > 0 && a.Bytes > q.CallBytes {
		return datadesk.Errorf(datadesk.TooLarge, "a call waiting for approval may carry at most %d bytes of arguments; this one has %d",
			q.CallBytes, a.Bytes).WithField("arguments")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.sweep(ctx, a.CreatedAt); err != nil {
		return err
	}
	var calls int
	var bytes int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(args_bytes), 0)::BIGINT FROM approvals
		WHERE user_id = ? AND status = 'pending' AND expires_at >= ?`, a.UserID, a.CreatedAt).Scan(&calls, &bytes)
	if err != nil {
		return dbError(ctx, err)
	}
	switch {
	case q.Calls > 0 && calls >= q.Calls:
		return datadesk.Errorf(datadesk.TooLarge, "%s has %d calls waiting for approval, the most one user may have; wait for decisions or let them expire",
			a.UserName, calls).WithField("approvals")
	case q.Bytes > 0 && bytes+a.Bytes > q.Bytes:
		return datadesk.Errorf(datadesk.TooLarge, "%s's calls waiting for approval may carry at most %d bytes together; %d are waiting and this call has %d",
			a.UserName, q.Bytes, bytes, a.Bytes).WithField("approvals")
	}
	inline := string(a.Arguments)
	a.ArgumentsApart = len(inline) > InlineArgsMax
	if a.ArgumentsApart {
		if err := writeFileAtomic(s.argsPath(a.ID), a.Arguments); err != nil {
			return err
		}
		inline = ""
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO approvals (id, tool, arguments, user_id, user_name, role, actor_id, actor_name, chat_session_id,
		reason, status, created_at, expires_at, args_bytes, args_rows, args_apart, target) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tool, inline, a.UserID, a.UserName, a.Role, a.ActorID, a.ActorName, a.ChatSession, a.Reason, a.Status,
		a.CreatedAt, a.ExpiresAt, a.Bytes, a.Rows, a.ArgumentsApart, a.Target)
	if err != nil {
		os.Remove(s.argsPath(a.ID))
		return dbError(ctx, err)
	}
	return nil
}

func (s *DB) argsPath(id string) string { return filepath.Join(s.argsDir, id+".json") }

// writeFileAtomic writes path through a synced temporary file and a rename.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("serverdb: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("serverdb: %w", err)
	}
	return nil
}

// sweep drops the arguments of calls that can no longer run: decided or
// expired ones. The caller holds s.mu.
func (s *DB) sweep(ctx context.Context, now time.Time) error {
	ids, err := s.approvalIDs(ctx, `args_apart AND (status <> 'pending' OR expires_at < ?)`, now)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.dropArguments(ctx, id); err != nil {
			return err
		}
	}
	_, err = s.db.ExecContext(ctx, `UPDATE approvals SET arguments = '' WHERE arguments <> '' AND (status <> 'pending' OR expires_at < ?)`, now)
	return dbError(ctx, err)
}

// approvalIDs returns the ids of the approvals where holds.
func (s *DB) approvalIDs(ctx context.Context, where string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM approvals WHERE `+where, args...)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, dbError(ctx, err)
		}
		ids = append(ids, id)
	}
	return ids, dbError(ctx, rows.Err())
}

// dropArguments forgets a call's arguments once it cannot run any more.
func (s *DB) dropArguments(ctx context.Context, id string) error {
	if err := os.Remove(s.argsPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("serverdb: %w", err)
	}
	_, err := s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE approvals SET arguments = '', args_apart = false WHERE id = ?`, id)
	return dbError(ctx, err)
}

func scanApproval(row interface{ Scan(...any) error }, now time.Time, extra ...any) (*Approval, error) {
	var a Approval
	var decidedBy, code, msg sql.NullString
	var decidedAt sql.NullTime
	dest := []any{&a.ID, &a.Tool, &a.UserID, &a.UserName, &a.Role, &a.ActorID, &a.ActorName, &a.Rows, &a.Bytes, &a.ArgumentsApart,
		&a.ChatSession, &a.Reason, &a.Target, &a.Status, &a.CreatedAt, &a.ExpiresAt, &decidedBy, &decidedAt, &code, &msg}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	a.DecidedBy, a.ErrorCode, a.ErrorMsg = decidedBy.String, code.String, msg.String
	if decidedAt.Valid {
		a.DecidedAt = &decidedAt.Time
	}
	if a.Status == ApprovalPending && now.After(a.ExpiresAt) {
		a.Status = ApprovalExpired
	}
	return &a, nil
}

// PendingCount counts the calls waiting for a decision.
func (s *DB) PendingCount(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE status = 'pending' AND expires_at >= ?`, now).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("serverdb: %w", err)
	}
	return n, nil
}

// Ping reports whether the database answers.
func (s *DB) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("serverdb: %w", err)
	}
	return nil
}

// Approval returns one approval with its result, and its arguments when
// they are kept inline. Errors: not_found.
func (s *DB) Approval(ctx context.Context, id string, now time.Time) (*Approval, error) {
	var args string
	var result sql.NullString
	a, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+summaryColumns+`, arguments, result FROM approvals WHERE id = ?`, id), now,
		&args, &result)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, datadesk.Errorf(datadesk.NotFound, "no approval with id %q", id).WithField("id")
	}
	if err != nil {
		return nil, dbError(ctx, err)
	}
	if args != "" {
		a.Arguments = json.RawMessage(args)
	}
	if result.Valid {
		a.Result = json.RawMessage(result.String)
	}
	return a, nil
}

// ApprovalArguments returns a pending call's arguments, from the queue or
// from their file. Errors: conflict when they are gone (the call was
// decided or expired).
func (s *DB) ApprovalArguments(ctx context.Context, a *Approval) (json.RawMessage, error) {
	if a.Arguments != nil {
		return a.Arguments, nil
	}
	if !a.ArgumentsApart {
		return nil, datadesk.Errorf(datadesk.Conflict, "approval %s no longer holds its arguments", a.ID).WithField("id")
	}
	b, err := os.ReadFile(s.argsPath(a.ID))
	if errors.Is(err, os.ErrNotExist) {
		return nil, datadesk.Errorf(datadesk.Conflict, "approval %s no longer holds its arguments", a.ID).WithField("id")
	}
	if err != nil {
		return nil, fmt.Errorf("serverdb: %w", err)
	}
	return b, nil
}

// ApprovalFilter picks a page of approvals.
type ApprovalFilter struct {
	// UserID keeps one user's calls when set; Status one status.
	UserID, Status string
	Limit, Offset  int
}

// Approvals lists a page of approvals' summaries, newest first, and
// whether more follow. Arguments and results are never read here, so a
// page costs the same whatever the calls carry.
func (s *DB) Approvals(ctx context.Context, f ApprovalFilter, now time.Time) ([]Approval, bool, error) {
	where, params := `(? = '' OR user_id = ?)`, []any{f.UserID, f.UserID}
	switch f.Status {
	case "":
	case ApprovalPending:
		where += ` AND status = 'pending' AND expires_at >= ?`
		params = append(params, now)
	case ApprovalExpired:
		where += ` AND status = 'pending' AND expires_at < ?`
		params = append(params, now)
	default:
		where += ` AND status = ?`
		params = append(params, f.Status)
	}
	q := `SELECT ` + summaryColumns + ` FROM approvals WHERE ` + where + ` ORDER BY created_at DESC, id LIMIT ? OFFSET ?`
	rows, err := s.db.QueryContext(ctx, q, append(params, f.Limit+1, f.Offset)...)
	if err != nil {
		return nil, false, dbError(ctx, err)
	}
	defer rows.Close()
	out := []Approval{}
	for rows.Next() {
		a, err := scanApproval(rows, now)
		if err != nil {
			return nil, false, dbError(ctx, err)
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, false, dbError(ctx, err)
	}
	more := len(out) > f.Limit
	if more {
		out = out[:f.Limit]
	}
	return out, more, nil
}

// DecideApproval moves a pending approval to running (approved), rejected
// or denied, in one step under a lock, so a call is claimed at most once.
// A call that will not run forgets its arguments. Errors: not_found,
// conflict (already decided, or expired).
func (s *DB) DecideApproval(ctx context.Context, id, by, status string, now time.Time) (*Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.Approval(ctx, id, now)
	if err != nil {
		return nil, err
	}
	if a.Status != ApprovalPending {
		return nil, datadesk.Errorf(datadesk.Conflict, "approval %s is %s; only a pending call can be decided", id, a.Status).WithField("id")
	}
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'`,
		status, by, now, id)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, datadesk.Errorf(datadesk.Conflict, "approval %s was decided meanwhile", id).WithField("id")
	}
	if status != ApprovalRunning {
		if err := s.dropArguments(ctx, id); err != nil {
			return nil, err
		}
	}
	a.Status, a.DecidedBy, a.DecidedAt = status, by, &now
	return a, nil
}

// FinishApproval records the outcome of a decided call: done with its
// result, failed with an error code, or denied with the policy's reason;
// its arguments are dropped.
func (s *DB) FinishApproval(ctx context.Context, id, status string, result json.RawMessage, code, msg string) error {
	res := sql.NullString{String: string(result), Valid: result != nil}
	_, err := s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE approvals SET status = ?, result = ?, error_code = ?, error_message = ? WHERE id = ?`,
		status, res, code, msg, id)
	if err != nil {
		return dbError(ctx, err)
	}
	return s.dropArguments(ctx, id)
}

// Session is a signed-in web session.
type Session struct {
	UserID    string
	CSRF      string
	ExpiresAt time.Time
	// Epoch is the user's session epoch when it began (rbac.User); it
	// lives while the user's epoch is the same.
	Epoch int64
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

// CreateSession starts a session for a user and returns its cookie token,
// `<user id>.<secret>`: the id lets a proxy route the session's requests
// to the user's node. Only the token's hash is stored.
func (s *DB) CreateSession(ctx context.Context, userID string, epoch int64, now time.Time, ttl time.Duration) (string, *Session, error) {
	token := userID + "." + randomToken()
	sess := &Session{UserID: userID, CSRF: randomToken(), ExpiresAt: now.Add(ttl), Epoch: epoch}
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (token_hash, user_id, csrf, created_at, expires_at, revoked, epoch) VALUES (?, ?, ?, ?, ?, false, ?)`,
		tokenHash(token), userID, sess.CSRF, now, sess.ExpiresAt, epoch)
	if err != nil {
		return "", nil, dbError(ctx, err)
	}
	return token, sess, nil
}

// Session returns the live session of a cookie token.
// Errors: unauthenticated (unknown, expired or signed out).
func (s *DB) Session(ctx context.Context, token string, now time.Time) (*Session, error) {
	var sess Session
	var revoked bool
	err := s.db.QueryRowContext(ctx, `SELECT user_id, csrf, expires_at, revoked, epoch FROM sessions WHERE token_hash = ?`, tokenHash(token)).
		Scan(&sess.UserID, &sess.CSRF, &sess.ExpiresAt, &revoked, &sess.Epoch)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && revoked:
		return nil, datadesk.Errorf(datadesk.Unauthenticated, "the session has ended; sign in again")
	case err != nil:
		return nil, dbError(ctx, err)
	case now.After(sess.ExpiresAt):
		return nil, datadesk.Errorf(datadesk.Unauthenticated, "the session expired; sign in again")
	}
	return &sess, nil
}

// RevokeSession ends a session.
func (s *DB) RevokeSession(ctx context.Context, token string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET revoked = true WHERE token_hash = ?`, tokenHash(token))
	return dbError(ctx, err)
}

// Backup writes a consistent copy of the database to the DuckDB file dst
// (new) and of the big arguments beside it into argsDst: every table's
// rows read in one transaction, with approvals' changes held meanwhile.
func (s *DB) Backup(ctx context.Context, dst, argsDst string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := sql.Open("duckdb", dst)
	if err != nil {
		return fmt.Errorf("serverdb: backup: %w", err)
	}
	defer out.Close()
	for _, stmt := range systemDDL {
		if _, err := out.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("serverdb: backup: %w", err)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbError(ctx, err)
	}
	defer tx.Rollback()
	var tables []string
	rows, err := tx.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return dbError(ctx, err)
	}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return dbError(ctx, err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	for _, t := range tables {
		if err := copyRows(ctx, tx, out, t); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return dbError(ctx, err)
	}
	return copyDir(s.argsDir, argsDst)
}

// copyRows copies table t's rows from tx to out.
func copyRows(ctx context.Context, tx *sql.Tx, out *sql.DB, t string) error {
	q := `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	rows, err := tx.QueryContext(ctx, `SELECT * FROM `+q)
	if err != nil {
		return dbError(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return dbError(ctx, err)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	ins, err := out.PrepareContext(ctx, `INSERT INTO `+q+` VALUES (`+marks+`)`)
	if err != nil {
		return fmt.Errorf("serverdb: backup of %s: %w", t, err)
	}
	defer ins.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return dbError(ctx, err)
		}
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return fmt.Errorf("serverdb: backup of %s: %w", t, err)
		}
	}
	return dbError(ctx, rows.Err())
}

// copyDir copies the regular files of a folder to dst.
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("serverdb: backup: %w", err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("serverdb: backup: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			if os.IsNotExist(err) {
				continue // an approval decided meanwhile
			}
			return fmt.Errorf("serverdb: backup: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			return fmt.Errorf("serverdb: backup: %w", err)
		}
	}
	return nil
}
