// Package testenv decides what a test does when something it needs from
// the machine (a ClickHouse server, HAProxy, Python with openpyxl,
// /proc) is missing.
package testenv

import (
	"os"
	"testing"
)

// Missing skips t because a dependency is missing, unless
// DATADESK_TEST_STRICT is set: make test sets it after installing every
// dependency, so there a missing one fails the test instead of letting
// it pass unseen.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("DATADESK_TEST_STRICT") != "" {
		t.Fatalf("a test dependency is missing (DATADESK_TEST_STRICT is set): "+format, args...)
	}
	t.Skipf(format, args...)
}
