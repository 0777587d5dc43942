package serverdb

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"datadesk"
)

func openSystem(t *testing.T) (*DB, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func pending(user string, now time.Time, args string) *Approval {
	return &Approval{ID: datadesk.NewID("a"), Tool: "files.create", Arguments: json.RawMessage(args), UserID: user, UserName: user,
		Role: "viewer", Status: ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
}

// TestApprovalQuota: one call, and one user's waiting calls together, are
// bounded; big arguments are a file, gone once the call is decided.
func TestApprovalQuota(t *testing.T) {
	s, dir := openSystem(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	q := PendingQuota{CallBytes: 100 << 10, Bytes: 120 << 10, Calls: 3}
	big := `{"content":"` + strings.Repeat("x", 60<<10) + `"}`
	tests := []struct {
		name, user, args string
		want             datadesk.Code
		limit            string
	}{
		{"small", "u1", `{"content":"x"}`, "", ""},
		{"big, stored apart", "u1", big, "", ""},
		{"over the user's bytes", "u1", big + "      ", datadesk.TooLarge, "122880"},
		{"over one call's bytes", "u2", `{"content":"` + strings.Repeat("x", 101<<10) + `"}`, datadesk.TooLarge, "102400"},
		{"third call", "u1", `{"content":"y"}`, "", ""},
		{"over the user's calls", "u1", `{"content":"z"}`, datadesk.TooLarge, "3 calls"},
		{"another user is not held back", "u2", big, "", ""},
	}
	var bigID string
	for _, tc := range tests {
		a := pending(tc.user, now, tc.args)
		err := s.AddApproval(ctx, a, q)
		if datadesk.ErrorCode(err) != tc.want || tc.limit != "" && !strings.Contains(err.Error(), tc.limit) {
			t.Errorf("%s: got %v, want %q naming %q", tc.name, err, tc.want, tc.limit)
		}
		if tc.name == "big, stored apart" {
			bigID = a.ID
		}
	}
	got, err := s.Approval(ctx, bigID, now)
	if err != nil || got.Arguments != nil || !got.ArgumentsApart || got.Bytes != int64(len(big)) {
		t.Fatalf("big approval: %+v %v", got, err)
	}
	raw, err := s.ApprovalArguments(ctx, got)
	if err != nil || string(raw) != big {
		t.Fatalf("arguments read back: %d bytes, %v", len(raw), err)
	}
	if _, err := s.DecideApproval(ctx, bigID, "root", ApprovalRejected, now); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "approvals", bigID+".json")); !os.IsNotExist(err) {
		t.Errorf("a rejected call's arguments remain: %v", err)
	}
	// Expired calls free the quota and their files.
	later := now.Add(2 * time.Hour)
	if err := s.AddApproval(ctx, pending("u1", later, big), q); err != nil {
		t.Errorf("after expiry: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "approvals"))
	if len(entries) != 1 {
		t.Errorf("%d argument files, want only the live one", len(entries))
	}
}

// TestApprovalListTenThousand: with 10,000 waiting calls, big ones among
// them, a page is read from the summaries alone.
func TestApprovalListTenThousand(t *testing.T) {
	s, _ := openSystem(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	_, err := s.db.ExecContext(ctx, `INSERT INTO approvals (id, tool, arguments, user_id, user_name, role, actor_id, actor_name,
		chat_session_id, reason, status, created_at, expires_at, args_bytes, args_rows, args_apart)
		SELECT 'a_' || i, 'files.create', repeat('x', 2000), 'u' || (i % 50), 'user' || (i % 50), 'viewer', '', '', '', 'policy rule',
			'pending', ?::TIMESTAMP + to_seconds(i), ?::TIMESTAMP + INTERVAL 1 DAY, 2000, i, false FROM range(10000) t(i)`, now, now)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	page, more, err := s.Approvals(ctx, ApprovalFilter{Status: ApprovalPending, Limit: 100, Offset: 9850}, now)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil || len(page) != 100 || !more {
		t.Fatalf("page: %d, more %v, %v", len(page), more, err)
	}
	if page[0].Arguments != nil || page[0].Rows != 149 {
		t.Errorf("summary %+v", page[0])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("a page of 100 allocated %d bytes, want under 4 MiB", alloc)
	}
	page, _, err = s.Approvals(ctx, ApprovalFilter{UserID: "u7", Limit: 1000}, now)
	if err != nil || len(page) != 200 {
		t.Errorf("one user's calls: %d, %v", len(page), err)
	}
	t.Logf("page 99 of 10,000 pending in %v", took)
}
