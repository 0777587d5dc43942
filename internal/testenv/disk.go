package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size bytes in a new folder of t's and
// returns the folder; it is unmounted when t ends. Mounting needs root,
// which make test has: elsewhere the test is skipped (Missing).
func SmallDisk(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		Missing(t, "cannot mount a small tmpfs (%v %s): make test runs as root, which can", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Fill writes a file named filler into dir until the file system has only
// leave bytes free, and returns a function that removes it.
func Fill(t testing.TB, dir string, leave int64) (free func()) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for left := int64(st.Bavail)*int64(st.Bsize) - leave; left > 0; left -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			break
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}
