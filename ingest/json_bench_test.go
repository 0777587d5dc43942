package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkJSONSource reads 100,000 NDJSON records through both passes.
func BenchmarkJSONSource(b *testing.B) {
	p := filepath.Join(b.TempDir(), "t.json")
	f, _ := os.Create(p)
	enc := json.NewEncoder(f)
	for i := 0; i < 100000; i++ {
		enc.Encode(map[string]any{"id": fmt.Sprintf("%08d", i), "region": "North", "amount": 12.5, "qty": i % 50, "day": "2024-01-02", "note": "fast gift", "ok": true, "zip": "02139"})
	}
	f.Close()
	in := New(Config{})
	for b.Loop() {
		res, err := in.Read(context.Background(), p, "t.json", b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if _, err := res.Tables[0].RowsWithNulls(func(r []string, null []bool) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
