package handoff

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine"
	"datadesk/serverdb"
)

type node struct {
	eng *engine.Engine
	sys *serverdb.DB
}

// records carries the server database's records as the API does.
type records struct{ db *serverdb.DB }

func (r records) Export(ctx context.Context, owner string) ([]byte, Counts, error) {
	rec, err := r.db.OwnerRecords(ctx, owner)
	if err != nil {
		return nil, Counts{}, err
	}
	b, err := json.Marshal(rec)
	return b, Counts{len(rec.Sessions), len(rec.Approvals), rec.Pending()}, err
}

func (r records) Import(ctx context.Context, owner string, b []byte) (Counts, error) {
	var rec serverdb.OwnerRecords
	if err := json.Unmarshal(b, &rec); err != nil {
		return Counts{}, err
	}
	return Counts{len(rec.Sessions), len(rec.Approvals), rec.Pending()}, r.db.PutOwnerRecords(ctx, owner, &rec)
}

func newNode(t *testing.T) node {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.New(engine.Config{Dir: dir, MemoryLimit: "128MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	sys, err := serverdb.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sys.Close() })
	return node{eng, sys}
}

// TestMoveStream: an owner's folder, sessions and approvals (one with
// arguments stored apart) arrive whole; a stream cut anywhere changes
// nothing on the node it was meant for; the sender keeps the owner
// withheld until told otherwise.
func TestMoveStream(t *testing.T) {
	ctx := context.Background()
	from, to := newNode(t), newNode(t)
	owner := datadesk.NewID("u")
	_, release, err := from.eng.Acquire(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	release()
	files := filepath.Join(from.eng.OwnerDir(owner), "files")
	if err := os.MkdirAll(files, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "f_one"), bytes.Repeat([]byte("x"), 100_000), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	token, _, err := from.sys.CreateSession(ctx, owner, 0, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	big := `{"filename":"a.csv","content":"` + strings.Repeat("y", serverdb.InlineArgsMax) + `"}`
	for i, args := range []string{`{"filename":"b.csv","content":"z"}`, big} {
		a := &serverdb.Approval{ID: datadesk.NewID("a"), Tool: "files.create", UserID: owner, UserName: "ana", Role: "viewer",
			Status: serverdb.ApprovalPending, CreatedAt: now.Add(time.Duration(i) * time.Second), ExpiresAt: now.Add(time.Hour), Arguments: []byte(args)}
		if err := from.sys.AddApproval(ctx, a, serverdb.PendingQuota{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := from.eng.Withhold(ctx, owner); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	sent, err := Send(ctx, &stream, from.eng, records{from.sys}, owner)
	if err != nil {
		t.Fatal(err)
	}
	if sent.Sessions != 1 || sent.Approvals != 2 || sent.Pending != 2 || sent.Files < 2 {
		t.Fatalf("sent %+v", sent)
	}
	if _, _, err := from.eng.Acquire(ctx, owner); datadesk.ErrorCode(err) != datadesk.Unavailable {
		t.Fatalf("a call on the node the owner leaves: %v, want unavailable", err)
	}
	whole := stream.Bytes()
	// The end entry's header starts 2,048 bytes before the stream's end
	// (its header, its data block, the two zero blocks of the trailer): a
	// cut in its header or in its text is a cut; past its text only
	// padding is missing, and every byte of content came.
	for _, cut := range []int{0, 512, len(whole) / 2, len(whole) - 2048 + 100, len(whole) - 1536 + 5} {
		if _, err := Receive(ctx, bytes.NewReader(whole[:cut]), to.eng, records{to.sys}, owner); datadesk.ErrorCode(err) != datadesk.Invalid {
			t.Fatalf("a stream cut at %d of %d: %v, want invalid", cut, len(whole), err)
		}
		if _, err := os.Stat(to.eng.OwnerDir(owner)); !os.IsNotExist(err) {
			t.Fatalf("a stream cut at %d left a folder: %v", cut, err)
		}
		if rec, err := to.sys.OwnerRecords(ctx, owner); err != nil || len(rec.Sessions)+len(rec.Approvals) > 0 {
			t.Fatalf("a stream cut at %d left records: %+v %v", cut, rec, err)
		}
	}
	// A whole stream received as another owner's: its records are
	// refused, and the folder goes with them.
	other := datadesk.NewID("u")
	if _, err := Receive(ctx, bytes.NewReader(whole), to.eng, records{to.sys}, other); datadesk.ErrorCode(err) != datadesk.Invalid {
		t.Fatalf("another owner's stream: %v, want invalid", err)
	}
	if _, err := os.Stat(to.eng.OwnerDir(other)); !os.IsNotExist(err) {
		t.Fatalf("another owner's stream left a folder: %v", err)
	}
	got, err := Receive(ctx, bytes.NewReader(whole), to.eng, records{to.sys}, owner)
	if err != nil || got != sent {
		t.Fatalf("received %+v %v, sent %+v", got, err, sent)
	}
	if b, err := os.ReadFile(filepath.Join(to.eng.OwnerDir(owner), "files", "f_one")); err != nil || len(b) != 100_000 {
		t.Fatalf("the file on the new node: %d bytes, %v", len(b), err)
	}
	if _, err := to.sys.Session(ctx, token, now); err != nil {
		t.Fatalf("the session on the new node: %v", err)
	}
	list, _, err := to.sys.Approvals(ctx, serverdb.ApprovalFilter{Status: serverdb.ApprovalPending, Limit: 10}, now)
	if err != nil || len(list) != 2 {
		t.Fatalf("approvals on the new node: %v %v", list, err)
	}
	for _, a := range list {
		full, err := to.sys.Approval(ctx, a.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		args, err := to.sys.ApprovalArguments(ctx, full)
		if err != nil || !isObject(args) {
			t.Fatalf("the arguments of %s on the new node: %d bytes, %v", a.ID, len(args), err)
		}
	}
	if _, release, err := to.eng.Acquire(ctx, owner); err != nil {
		t.Fatalf("the owner on the new node: %v", err)
	} else {
		release()
	}
	// The old node forgets it.
	if err := from.eng.DropOwner(owner); err != nil {
		t.Fatal(err)
	}
	if err := from.sys.DropOwner(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(from.eng.OwnerDir(owner)); !os.IsNotExist(err) {
		t.Fatalf("the old node's folder: %v", err)
	}
}

func isObject(b []byte) bool { return len(b) > 0 && b[0] == '{' && b[len(b)-1] == '}' }
