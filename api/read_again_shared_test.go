package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine"
)

// diskUsage is the bytes a folder's files take on disk, each file's
// blocks counted once however many names it has.
func diskUsage(t *testing.T, dir string) int64 {
	t.Helper()
	seen := map[uint64]bool{}
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || fi.IsDir() || seen[st.Ino] {
			return nil
		}
		seen[st.Ino] = true
		n += st.Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadAgainSharesBytes: ten 17-byte requests to read an 8.3 MB CSV
// again grew its owner's folder from 11 to 113 MB, each a copy of the
// bytes, with no turn taken and no bound on the owner's storage. A file
// read again now shares the stored bytes (its new tables are what it
// adds), takes one of the caller's turns for bodies as an upload does,
// and counts, whole, against the owner's storage limit (413 past it).
func TestReadAgainSharesBytes(t *testing.T) {
	t.Parallel()
	var csv strings.Builder
	csv.WriteString("id,region,amount,note\n")
	for i := range 40_000 {
		fmt.Fprintf(&csv, "%d,r%d,%d.%02d,some words of a note %d\n", i, i%9, i, i%100, i%1000)
	}
	size := int64(csv.Len())
	limit := 8 * size
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 8 << 20}, Engine: engine.Config{MemoryLimit: "256MB", MaxTempSize: "1GB", MaxOwnerBytes: limit}})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	code, m := ts.Upload(ana, "big.csv", []byte(csv.String()))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	id := m["file"].(map[string]any)["id"].(string)
	owner, err := users.ByName("ana")
	if err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(ts.Server.Engine().OwnerDir(owner.ID), "files")
	before := diskUsage(t, files)
	codes := map[int]int{}
	for range 10 {
		code, m, _ := ts.DoJSON("POST", "/v1/files/"+id+"/read", ana, map[string]any{"header_row": 1})
		codes[code]++
		if code != http.StatusCreated && apitest.ErrCode(m) != "too_large" {
			t.Errorf("read again: %d %v", code, m)
		}
	}
	grew := diskUsage(t, files) - before
	t.Logf("a %d KiB file read again 10 times: answers %v; its files grew %d KiB", size>>10, codes, grew>>10)
	if grew > size/4 {
		t.Errorf("reading again grew the stored files by %d KiB, want the bytes shared (the file is %d KiB)", grew>>10, size>>10)
	}
	// Each file counts whole against the limit of 8 files' bytes (with the
	// database's), so some of the ten are refused.
	if codes[http.StatusRequestEntityTooLarge] == 0 || codes[http.StatusCreated] == 0 {
		t.Errorf("answers %v, want some stored and the rest refused past the storage limit", codes)
	}
	// A file read again takes a turn for bodies: with the caller's turns
	// held, it waits and is told to try again.
	ts.Server.SetBodiesWait(200 * time.Millisecond)
	for range api.BodiesPerUser {
		release, err := ts.Server.EnterBodies(context.Background(), owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
	}
	if code, m, _ := ts.DoJSON("POST", "/v1/files/"+id+"/read", ana, map[string]any{"header_row": 1}); code != http.StatusServiceUnavailable {
		t.Errorf("read again with the caller's turns held: %d %v, want 503", code, m)
	}
}
