package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/backup"
	"datadesk/cluster"
	"datadesk/engine"
	"datadesk/internal/testenv"
	"datadesk/rbac"
)

// TestBackupWhileServing backs a running server up through its control
// socket, kills the server in the middle of a second backup, and restores
// the last complete one into a new data directory: every owner's files
// and tables as they were at the first backup, the users with them.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	dir, backups := t.TempDir(), t.TempDir()
	var tokens []string
	for i := range 12 {
		var out bytes.Buffer
		if err := run([]string{"user", "add", fmt.Sprintf("ana%d", i), "--role", "analyst", "--data", dir}, &out, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		tokens = append(tokens, lines[len(lines)-1])
	}
	addr, err := cluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	server := startServer(t, dir, addr)
	upload := func(token, name, body string) { uploadTo(t, addr, token, name, body) }
	// Owner 1's table is long: a restored table keeps its file order.
	var long strings.Builder
	long.WriteString("id,amount\n")
	for j := range 5000 {
		fmt.Fprintf(&long, "%05d,%d\n", j, j%13)
	}
	for i, token := range tokens {
		body := fmt.Sprintf("id,amount\n%03d,%d\n%03d,%d\n", i, i, i+100, 2*i)
		if i == 1 {
			body = long.String()
		}
		upload(token, "before.csv", body)
	}
	var out bytes.Buffer
	if err := run([]string{"backup", backups, "--data", dir}, &out, &out); err != nil || !strings.Contains(out.String(), "backup written to") {
		t.Fatalf("backup: %v %s", err, out.String())
	}
	first, _, err := backup.Latest(backups)
	if err != nil {
		t.Fatal(err)
	}
	upload(tokens[0], "after.csv", "id\n1\n")

	// A second backup, and the server killed while it is being written.
	done := make(chan error, 1)
	go func() { done <- run([]string{"backup", backups, "--data", dir}, &bytes.Buffer{}, &bytes.Buffer{}) }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(backups, ".partial-*")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second backup never started")
		}
	}
	server.Process.Kill()
	server.Wait()
	if err := <-done; err == nil {
		t.Log("the second backup finished before the kill")
	}
	if latest, _, err := backup.Latest(backups); err != nil || latest != first {
		t.Fatalf("latest complete backup %s %v, want %s", latest, err, first)
	}

	restored := t.TempDir()
	out.Reset()
	if err := run([]string{"restore", backups, "--data", restored}, &out, &out); err != nil || !strings.Contains(out.String(), first) {
		t.Fatalf("restore: %v %s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"restore", backups, "--data", restored}, &out, &out); err == nil {
		t.Errorf("a second restore into a full data directory succeeded")
	}
	users, err := rbac.OpenUsers(restored)
	if err != nil {
		t.Fatal(err)
	}
	list, err := users.List()
	if err != nil || len(list) != len(tokens) {
		t.Fatalf("restored users: %d %v", len(list), err)
	}
	eng, err := engine.New(engine.Config{Dir: restored, MemoryLimit: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	for _, u := range list {
		i, _ := strconv.Atoi(strings.TrimPrefix(u.Name, "ana"))
		s, release, err := eng.Acquire(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		files, err := s.Files(ctx, "", 100)
		if err != nil || len(files) != 1 || files[0].Filename != "before.csv" {
			t.Errorf("owner %d: files %v %v, want before.csv alone", i, files, err)
			release()
			continue
		}
		var rows strings.Builder
		if _, err := s.Scan(ctx, files[0].Tables[0].ID, func(r []any) error { fmt.Fprintln(&rows, r...); return nil }); err != nil {
			t.Error(err)
		}
		if _, f, err := s.Open(ctx, files[0].ID); err != nil {
			t.Errorf("owner %d: the stored file's bytes: %v", i, err)
		} else {
			f.Close()
		}
		release()
		want := fmt.Sprintf("%03d %d\n%03d %d\n", i, i, i+100, 2*i)
		if strings.Contains(rows.String(), "00000 0\n") {
			want = strings.ReplaceAll(strings.TrimPrefix(long.String(), "id,amount\n"), ",", " ")
		}
		if rows.String() != want {
			t.Errorf("owner %d: rows differ after the restore: %.200q", i, rows.String())
		}
	}
}

// startServer runs `datadesk serve` on dir as a process of its own and
// waits until it serves.
func startServer(t *testing.T, dir, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--data", dir, "--memory-limit", "256MB")
	cmd.Env = append(os.Environ(), "DATADESK_TEST_COMMAND=1")
	logPath := filepath.Join(t.TempDir(), "server.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), `"msg":"serving"`) {
			return cmd
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("the server did not start: %s", b)
		}
	}
}

// uploadTo uploads a file to the server at addr as token's user.
func uploadTo(t *testing.T, addr, token, name, body string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write([]byte(body))
	mw.Close()
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/files", &b)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload %s: %d", name, resp.StatusCode)
	}
}

// TestBackupVerify: a backup left out placement.json, the one record of
// the members after a nodes apply, and nothing could tell a backup whose
// files were since removed or changed. A backup now keeps the placement,
// and backup verify checks every file against the manifest's checksums;
// restore refuses a backup that is not whole.
func TestBackupVerify(t *testing.T) {
	dir, backups := t.TempDir(), t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"user", "add", "ana", "--role", "analyst", "--data", dir}, &out, &out); err != nil {
		t.Fatal(err)
	}
	placement := []byte(`{"nodes":"n1=127.0.0.1:1,n2=127.0.0.1:2"}`)
	if err := os.WriteFile(filepath.Join(dir, cluster.PlacementFile), placement, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run([]string{"backup", backups, "--data", dir}, &out, &out); err != nil {
		t.Fatalf("backup: %v %s", err, out.String())
	}
	path := strings.TrimSpace(strings.TrimPrefix(out.String(), "backup written to "))
	if b, err := os.ReadFile(filepath.Join(path, "data", cluster.PlacementFile)); err != nil || !bytes.Equal(b, placement) {
		t.Errorf("the backup's placement: %q, %v", b, err)
	}
	out.Reset()
	if err := run([]string{"backup", "verify", backups}, &out, &out); err != nil || !strings.Contains(out.String(), "complete and whole") {
		t.Fatalf("verify a whole backup: %v %s", err, out.String())
	}
	if err := os.Remove(filepath.Join(path, "data", "users.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "data", cluster.PlacementFile), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"backup", "verify", path}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "data/users.json is missing") || !strings.Contains(err.Error(), "data/placement.json has changed") {
		t.Errorf("verify a backup with a file removed and one changed: %v", err)
	}
	// A refused restore leaves its target as it found it: an empty folder
	// empty, a folder that was not there not there.
	empty := t.TempDir()
	absent := filepath.Join(t.TempDir(), "absent")
	for _, target := range []string{empty, absent} {
		if err := run([]string{"restore", path, "--data", target}, &out, &out); err == nil || !strings.Contains(err.Error(), "not whole") {
			t.Errorf("restore of a backup not whole: %v", err)
		}
	}
	if left, err := os.ReadDir(empty); err != nil || len(left) > 0 {
		t.Errorf("a refused restore left %v in its target (%v)", left, err)
	}
	if _, err := os.Stat(absent); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused restore made its target: %v", err)
	}
}

// TestBackupOnFullDisk: a backup into a full disk is refused as
// unavailable, saying the disk is full, leaves nothing behind, and once
// space is freed the same backup is written whole.
func TestBackupOnFullDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	backups := testenv.SmallDisk(t, 8<<20)
	var out bytes.Buffer
	if err := run([]string{"user", "add", "ana", "--role", "analyst", "--data", dir}, &out, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	token := lines[len(lines)-1]
	addr, err := cluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	startServer(t, dir, addr)
	var csv strings.Builder
	csv.WriteString("id,note\n")
	for i := range 40_000 {
		fmt.Fprintf(&csv, "%d,a note that takes some room %d\n", i, i)
	}
	uploadTo(t, addr, token, "notes.csv", csv.String())

	freeSpace := testenv.Fill(t, backups, 256<<10)
	err = run([]string{"backup", backups, "--data", dir}, &out, &out)
	if datadesk.ErrorCode(err) != datadesk.Unavailable || !strings.Contains(err.Error(), "is full") {
		t.Errorf("a backup into a full disk: %v, want unavailable saying the disk is full", err)
	}
	if left, _ := filepath.Glob(filepath.Join(backups, ".partial-*")); len(left) > 0 {
		t.Errorf("a failed backup left %v", left)
	}
	freeSpace()
	out.Reset()
	if err := run([]string{"backup", backups, "--data", dir}, &out, &out); err != nil {
		t.Fatalf("the backup once space is freed: %v %s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"backup", "verify", backups}, &out, &out); err != nil || !strings.Contains(out.String(), "complete and whole") {
		t.Errorf("verify: %v %s", err, out.String())
	}
}
