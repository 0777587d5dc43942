package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine"
)

// wideRecord is a JSON array of one record of n keys.
func wideRecord(n int) []byte {
	var b strings.Builder
	b.WriteString("[{")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"key_%d":%d`, i, i%10)
	}
	b.WriteString("}]\n")
	return []byte(b.String())
}

// TestWideJSONRecordRefusedAtTheLimit: a record of 200,000 keys (3.6 MB)
// was refused after 103 s of a core, 50,000 keys after 5 s: every key was
// read, and each looked up in the whole record for its place, before the
// limit was checked. A record is now read a key at a time in file order,
// and refused at the key past engine.MaxColumns: a record ten times wider
// costs no more to refuse.
func TestWideJSONRecordRefusedAtTheLimit(t *testing.T) {
	// Serial: it counts the bytes the process allocates, which tests
	// beside it would add to.
	fx := newFixture(t)
	took := map[int]time.Duration{}
	for _, n := range []int{engine.MaxColumns + 1, 200_000} {
		content := wideRecord(n)
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := fx.ingestBytes(fmt.Sprintf("wide%d.json", n), content)
			done <- err
		}()
		select {
		case err := <-done:
			if datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), fmt.Sprint(engine.MaxColumns)) {
				t.Errorf("%d keys: %v, want invalid naming the limit", n, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a record of %d keys (%d KiB) is not refused after %v", n, len(content)>>10, time.Since(start))
		}
		took[n] = time.Since(start)
		t.Logf("a record of %d keys (%d KiB) refused in %v", n, len(content)>>10, took[n])
	}
	if took[200_000] > 2*took[engine.MaxColumns+1]+200*time.Millisecond {
		t.Errorf("refusing 200,000 keys took %v against %v for %d: not at the limit", took[200_000], took[engine.MaxColumns+1], engine.MaxColumns+1)
	}
	// At the limit, the record is read: its header has every key, in the
	// time and memory of its bytes (the engine then refuses a table wider
	// than the node's memory loads, engine.MaxWidth, as for any format).
	p := filepath.Join(t.TempDir(), "limit.json")
	if err := os.WriteFile(p, wideRecord(engine.MaxColumns), 0o600); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocated := ms.TotalAlloc
	start := time.Now()
	res, err := fx.in.Read(context.Background(), p, "limit.json", t.TempDir())
	readIn := time.Since(start)
	runtime.ReadMemStats(&ms)
	if err != nil {
		t.Fatalf("a record of %d keys: %v", engine.MaxColumns, err)
	}
	defer res.Close()
	if n := len(res.Tables[0].Header); n != engine.MaxColumns {
		t.Errorf("the header has %d keys, want %d", n, engine.MaxColumns)
	}
	t.Logf("a record of %d keys read in %v, %d MiB allocated", engine.MaxColumns, readIn, (ms.TotalAlloc-allocated)>>20)
	if readIn > time.Second || ms.TotalAlloc-allocated > 64<<20 {
		t.Errorf("reading %d keys took %v and %d MiB", engine.MaxColumns, readIn, (ms.TotalAlloc-allocated)>>20)
	}
}
