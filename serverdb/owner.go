package serverdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"datadesk"
)

// OwnerRecords are what the server's database holds of one owner: web
// sessions and calls waiting for approval (with what became of earlier
// ones), as an owner's move to another node carries them.
type OwnerRecords struct {
	Sessions  []SessionRecord  `json:"sessions"`
	Approvals []ApprovalRecord `json:"approvals"`
}

// SessionRecord is a session's row: its token's hash, never the token.
type SessionRecord struct {
	TokenHash string    `json:"token_hash"`
	UserID    string    `json:"user_id"`
	CSRF      string    `json:"csrf"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Revoked   bool      `json:"revoked"`
	Epoch     int64     `json:"epoch,omitzero"`
}

// ApprovalRecord is an approval's row, with its arguments when they are
// stored apart.
type ApprovalRecord struct {
	ID          string          `json:"id"`
	Tool        string          `json:"tool"`
	Arguments   string          `json:"arguments"`
	UserID      string          `json:"user_id"`
	UserName    string          `json:"user_name"`
	Role        string          `json:"role"`
	ActorID     string          `json:"actor_id"`
	ActorName   string          `json:"actor_name"`
	ChatSession string          `json:"chat_session_id"`
	Reason      string          `json:"reason"`
	Status      string          `json:"status"`
	CreatedAt   time.Time       `json:"created_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
	DecidedBy   *string         `json:"decided_by"`
	DecidedAt   *time.Time      `json:"decided_at"`
	Result      *string         `json:"result"`
	ErrorCode   *string         `json:"error_code"`
	ErrorMsg    *string         `json:"error_message"`
	ArgsBytes   int64           `json:"args_bytes"`
	ArgsRows    int64           `json:"args_rows"`
	ArgsApart   bool            `json:"args_apart"`
	ArgsFile    json.RawMessage `json:"args_file,omitempty"`
	Target      string          `json:"target,omitempty"`
}

const approvalRecordColumns = `id, tool, arguments, user_id, user_name, role, actor_id, actor_name, chat_session_id, reason, status,
	created_at, expires_at, decided_by, decided_at, result, error_code, error_message, args_bytes, args_rows, args_apart, target`

// Pending counts the calls among the records that wait for a decision.
func (r *OwnerRecords) Pending() int {
	n := 0
	for _, a := range r.Approvals {
		if a.Status == ApprovalPending {
			n++
		}
	}
	return n
}

// OwnerRecords reads what the database holds of owner. Approvals' state
// changes wait meanwhile.
func (s *DB) OwnerRecords(ctx context.Context, owner string) (*OwnerRecords, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &OwnerRecords{Sessions: []SessionRecord{}, Approvals: []ApprovalRecord{}}
	rows, err := s.db.QueryContext(ctx, `SELECT token_hash, user_id, csrf, created_at, expires_at, revoked, epoch FROM sessions WHERE user_id = ? ORDER BY created_at`, owner)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	for rows.Next() {
		var r SessionRecord
		if err := rows.Scan(&r.TokenHash, &r.UserID, &r.CSRF, &r.CreatedAt, &r.ExpiresAt, &r.Revoked, &r.Epoch); err != nil {
			rows.Close()
			return nil, dbError(ctx, err)
		}
		out.Sessions = append(out.Sessions, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, dbError(ctx, err)
	}
	rows, err = s.db.QueryContext(ctx, `SELECT `+approvalRecordColumns+` FROM approvals WHERE user_id = ? ORDER BY created_at, id`, owner)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a ApprovalRecord
		if err := rows.Scan(&a.ID, &a.Tool, &a.Arguments, &a.UserID, &a.UserName, &a.Role, &a.ActorID, &a.ActorName, &a.ChatSession,
			&a.Reason, &a.Status, &a.CreatedAt, &a.ExpiresAt, &a.DecidedBy, &a.DecidedAt, &a.Result, &a.ErrorCode, &a.ErrorMsg,
			&a.ArgsBytes, &a.ArgsRows, &a.ArgsApart, &a.Target); err != nil {
			return nil, dbError(ctx, err)
		}
		if a.ArgsApart {
			b, err := os.ReadFile(s.argsPath(a.ID))
			if err != nil {
				return nil, fmt.Errorf("serverdb: the arguments of approval %s: %w", a.ID, err)
			}
			a.ArgsFile = b
		}
		out.Approvals = append(out.Approvals, a)
	}
	return out, dbError(ctx, rows.Err())
}

// PutOwnerRecords stores owner's records that another node held,
// replacing any of the same token or id, in one transaction. Errors:
// invalid for a record of another owner (nothing is stored).
func (s *DB) PutOwnerRecords(ctx context.Context, owner string, r *OwnerRecords) error {
	for _, x := range r.Sessions {
		if x.UserID != owner {
			return datadesk.Errorf(datadesk.Invalid, "the records of %s hold a session of another account", owner)
		}
	}
	for _, a := range r.Approvals {
		if a.UserID != owner {
			return datadesk.Errorf(datadesk.Invalid, "the records of %s hold an approval of another account", owner)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range r.Approvals {
		if a.ArgsApart {
			if err := writeFileAtomic(s.argsPath(a.ID), a.ArgsFile); err != nil {
				return err
			}
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbError(ctx, err)
	}
	defer tx.Rollback()
	for _, x := range r.Sessions {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO sessions (token_hash, user_id, csrf, created_at, expires_at, revoked, epoch) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			x.TokenHash, x.UserID, x.CSRF, x.CreatedAt, x.ExpiresAt, x.Revoked, x.Epoch); err != nil {
			return dbError(ctx, err)
		}
	}
	for _, a := range r.Approvals {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO approvals (`+approvalRecordColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.Tool, a.Arguments, a.UserID, a.UserName, a.Role, a.ActorID, a.ActorName, a.ChatSession, a.Reason, a.Status,
			a.CreatedAt, a.ExpiresAt, a.DecidedBy, a.DecidedAt, a.Result, a.ErrorCode, a.ErrorMsg, a.ArgsBytes, a.ArgsRows, a.ArgsApart, a.Target); err != nil {
			return dbError(ctx, err)
		}
	}
	return dbError(ctx, tx.Commit())
}

// DropOwner forgets an owner's sessions and approvals: the owner moved to
// another node, which holds them now.
func (s *DB) DropOwner(ctx context.Context, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	apart, err := s.approvalIDs(ctx, `user_id = ? AND args_apart`, owner)
	if err != nil {
		return err
	}
	for _, stmt := range []string{`DELETE FROM sessions WHERE user_id = ?`, `DELETE FROM approvals WHERE user_id = ?`} {
		if _, err := s.db.ExecContext(ctx, stmt, owner); err != nil {
			return dbError(ctx, err)
		}
	}
	for _, id := range apart {
		if err := os.Remove(s.argsPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("serverdb: %w", err)
		}
	}
	return nil
}
