package api_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine"
	"datadesk/internal/testenv"
	"datadesk/rbac"
)

// TestFullDiskSaysSo runs a server on a small file system and fills it: an
// upload answered 400 "the upload could not be read", blaming the client,
// and files.create a 500 (with no byte free, too, writing its content
// aside). Both now answer 503 saying the disk is full,
// nothing half-written stays, /readyz is 503 on low space, and once space
// is freed the same upload is stored.
func TestFullDiskSaysSo(t *testing.T) {
	t.Parallel()
	mnt := testenv.SmallDisk(t, 192<<20)
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 32 << 20}, Engine: engine.Config{Dir: mnt, MemoryLimit: "256MB", MaxTempSize: "32MB"}})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if code, m := ts.Upload(ana, "first.csv", []byte("a,b\n1,2\n")); code != 201 {
		t.Fatalf("an upload with room: %d %v", code, m)
	}
	var csv strings.Builder
	csv.WriteString("id,note\n")
	for i := range 60000 {
		fmt.Fprintf(&csv, "%d,a note of some length %d\n", i, i)
	}
	// Fill the file system but for 256 KiB.
	freeSpace := testenv.Fill(t, mnt, 256<<10)

	code, m := ts.Upload(ana, "big.csv", []byte(csv.String()))
	if code != 503 || apitest.ErrCode(m) != "unavailable" || !strings.Contains(apitest.MustJSON(m), "disk is full") {
		t.Errorf("an upload on a full disk: %d %v, want 503 saying the disk is full", code, m)
	}
	code, m = ts.Call(ana, "files.create", map[string]any{"filename": "notes.txt", "content": strings.Repeat("words ", 200000)})
	if code != 503 || apitest.ErrCode(m) != "unavailable" || !strings.Contains(apitest.MustJSON(m), "disk is full") {
		t.Errorf("files.create on a full disk: %d %v, want 503 saying the disk is full", code, m)
	}
	if code, m, _ := ts.Do("GET", "/readyz", "", nil, ""); code != 503 || !strings.Contains(apitest.MustJSON(m), "free, less than") {
		t.Errorf("readyz on a full disk: %d %v", code, m)
	}
	// To its last byte: files.create writes its content aside first, to
	// read its shape for the policy, and that write said 500.
	fillAll(t, mnt)
	code, m = ts.Call(ana, "files.create", map[string]any{"filename": "notes.csv", "content": "a,b\n" + strings.Repeat("1,2\n", 20000)})
	if code != 503 || apitest.ErrCode(m) != "unavailable" || !strings.Contains(apitest.MustJSON(m), "disk is full") {
		t.Errorf("files.create of a table with no byte free: %d %v, want 503 saying the disk is full", code, m)
	}
	if err := os.Remove(filepath.Join(mnt, "filler-last")); err != nil {
		t.Fatal(err)
	}

	freeSpace()
	if code, m := ts.Upload(ana, "big.csv", []byte(csv.String())); code != 201 {
		t.Errorf("the upload once space is freed: %d %v", code, m)
	}
	_, m, _ = ts.Do("GET", "/v1/files?session_only=false", ana, nil, "")
	if n := len(m["files"].([]any)); n != 2 {
		t.Errorf("%d files after the failed calls, want the 2 stored: %v", n, m)
	}
	var left []string
	filepath.Walk(mnt, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.Contains(p, string(filepath.Separator)+"incoming"+string(filepath.Separator)) {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("half-written files left: %v", left)
	}
}

// fillAll writes filler-last in dir until its file system has no byte
// left.
func fillAll(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler-last"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{1 << 16, 1} {
		chunk := make([]byte, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
	}
}

// TestNoCallWithoutItsRecord: with the audit log's file system full, calls
// go on while the log's reserved space holds their records, and once it
// runs low they are refused with a 503 saying why, before they run; every
// call answered has its record, and once space is freed calls run again.
// The log has a small file system of its own here, so that DuckDB's own
// writes and frees elsewhere do not decide when it fills.
func TestNoCallWithoutItsRecord(t *testing.T) {
	t.Parallel()
	logs := testenv.SmallDisk(t, 1<<20)
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	small, err := rbac.OpenAuditReserving(logs, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	(*ts.Server.AuditRef()).Close()
	(*ts.Server.AuditRef()) = small
	ana := apitest.AddUser(t, users, "ana", "analyst")
	code, up := ts.Upload(ana, "old.csv", []byte("a\n1\n"))
	if code != 201 {
		t.Fatalf("an upload: %d %v", code, up)
	}
	freeSpace := testenv.Fill(t, logs, 0)
	records := func() int {
		b, _ := os.ReadFile(filepath.Join(logs, "audit.jsonl"))
		return strings.Count(string(b), "\n")
	}
	answered := 0
	for range 2000 {
		code, m, _ := ts.Do("GET", "/v1/files", ana, nil, "")
		if code == 200 {
			answered++
			continue
		}
		if code != 503 || !strings.Contains(apitest.MustJSON(m), "audit log cannot be written") {
			t.Fatalf("a call on a full disk: %d %v, want 200 or a 503 naming the audit log", code, m)
		}
		break
	}
	t.Logf("%d calls answered on the full disk before one was refused", answered)
	if answered == 2000 {
		t.Fatal("no call was refused with the audit log's room gone")
	}
	if code, m := ts.Call(ana, "files.read", map[string]any{}); code != 503 {
		t.Errorf("a tool call with no room for its record: %d %v, want 503", code, m)
	}
	// Refused calls are not recorded (their records would take the room of
	// the calls running); a delete, which frees space, runs on that room.
	if got := records(); got != answered+1 {
		t.Errorf("%d records after %d calls answered and an upload", got, answered)
	}
	fileID := up["file"].(map[string]any)["id"].(string)
	if code, m, _ := ts.Do("DELETE", "/v1/files/"+fileID, ana, nil, ""); code/100 != 2 {
		t.Errorf("a delete on a full disk: %d %v", code, m)
	}
	freeSpace()
	if code, m, _ := ts.Do("GET", "/v1/files", ana, nil, ""); code != 200 {
		t.Errorf("a call once space is freed: %d %v", code, m)
	}
	if got := records(); got != answered+3 {
		t.Errorf("%d records after the upload, %d calls answered, the delete and one more call", got, answered)
	}
}
