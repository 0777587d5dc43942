package main

import (
	"bytes"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/cluster"
)

// TestDataStaysPrivate: system.duckdb and its write-ahead log were 0644 in
// a 0755 directory, and held the arguments of calls waiting for approval
// (a viewer's pending create with an SSN was found with grep). After a
// run, nothing under the data directory is group- or world-readable, a
// file left readable by an older version included.
func TestDataStaysPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "left-by-an-older-version"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	token := func(name, role string) string {
		var out bytes.Buffer
		if err := run([]string{"user", "add", name, "--role", role, "--data", dir}, &out, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		return lines[len(lines)-1]
	}
	ana, vic := token("ana", "analyst"), token("vic", "viewer")
	addr, err := cluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	server := startServer(t, dir, addr)
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", "t.csv")
	fw.Write([]byte("id,amount\n001,2\n"))
	mw.Close()
	post := func(token, path, contentType string, body *bytes.Buffer) int {
		req, _ := http.NewRequest("POST", "http://"+addr+path, body)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(ana, "/v1/files", mw.FormDataContentType(), &b); code != http.StatusCreated {
		t.Fatalf("upload: %d", code)
	}
	pending := bytes.NewBufferString(`{"arguments":{"filename":"ssn.txt","content":"123-45-6789"}}`)
	if code := post(vic, "/v1/tools/files.create", "application/json", pending); code != http.StatusAccepted {
		t.Fatalf("a viewer's create: %d, want 202", code)
	}
	// Killed, so that write-ahead logs stay.
	server.Process.Kill()
	server.Wait()
	var open []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			rel, _ := filepath.Rel(dir, path)
			open = append(open, rel+" "+info.Mode().Perm().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Errorf("readable by others under the data directory:\n%s", strings.Join(open, "\n"))
	}
}
