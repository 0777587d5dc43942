package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine"
)

// wideAllowance is what a load may add to the process beyond the engine's
// --memory-limit: Go's own heap and buffers, and DuckDB's allocations
// outside its buffer pool.
const wideAllowance = 256 << 20

// TestWideFilesBounded: 100 rows of 1,000 columns of "1" (200 KB) took
// 169 s and a peak of 6.7 GB on a node limited to 1 GB, and 3,000 columns
// did not finish in 20 minutes: loading them through DuckDB's readers ran
// one statement with expressions for every column, planned in time and
// memory growing with the square of the columns. A table wider than
// directWidth now streams through Go, and its table is made from its
// columns' definitions. Both tables load with the process's growth within
// the memory limit and a stated allowance (measured: 200 and 225 MB for
// the whole process, in 1.9 s and 6.2 s).
func TestWideFilesBounded(t *testing.T) {
	// Not parallel: it measures the process's memory, which other tests would add to.
	const limit = 1 << 30
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 64 << 20}, Engine: engine.Config{MemoryLimit: "1GB"}})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	for _, tc := range []struct{ rows, cols int }{{1000, 1000}, {100, 3000}} {
		t.Run(fmt.Sprintf("%dx%d", tc.rows, tc.cols), func(t *testing.T) {
			var b strings.Builder
			for i := range tc.cols {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "c%d", i)
			}
			b.WriteByte('\n')
			row := strings.TrimSuffix(strings.Repeat("1,", tc.cols), ",") + "\n"
			b.WriteString(strings.Repeat(row, tc.rows))
			var (
				code int
				m    map[string]any
			)
			rss, _ := apitest.MemoryPeaks(t, func() {
				code, m = ts.Upload(token, "wide.csv", []byte(b.String()))
			})
			if code != http.StatusCreated {
				t.Fatalf("got %d %v", code, m)
			}
			file := m["file"].(map[string]any)
			if got := int(file["row_count"].(float64)); got != tc.rows {
				t.Errorf("rows: got %d, want %d", got, tc.rows)
			}
			if got := len(m["tables"].([]any)[0].(map[string]any)["columns"].([]any)); got != tc.cols {
				t.Errorf("columns: got %d, want %d", got, tc.cols)
			}
			t.Logf("the process grew %d MiB", rss>>20)
			if rss > limit+wideAllowance {
				t.Errorf("the process grew %d MiB, past the memory limit of %d MiB and its allowance of %d MiB", rss>>20, limit>>20, wideAllowance>>20)
			}
		})
	}
}
