package api_test

import (
	"os"
	"testing"
)

// TestMain stops the ClickHouse cluster if a test started it.
func TestMain(m *testing.M) {
	code := m.Run()
	stopTestCluster()
	os.Exit(code)
}
