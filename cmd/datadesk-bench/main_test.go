package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArgumentsRefusedBeforeWork: a wrong group or owner count is refused
// at once, naming what is allowed, before any input is generated.
func TestArgumentsRefusedBeforeWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--only", "ingest,nope"}, `--only takes ingest, layout`},
		{[]string{"--owners", "200,none"}, `not "none"`},
		{[]string{"--backend", "sqlite", "--work", t.TempDir(), "--rows", "1"}, "unknown backend"},
	} {
		err := runBench(c.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.says)
		}
	}
}

// TestFindDatadesk: the binary named is used as an absolute path, and a
// name that is not there is an error, not a silent fallback.
func TestFindDatadesk(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "datadesk")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := findDatadesk(bin); err != nil || got != bin {
		t.Errorf("findDatadesk(%s) = %s, %v", bin, got, err)
	}
	if _, err := findDatadesk(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing binary was accepted")
	}
}
