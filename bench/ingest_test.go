package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/typing"
	"datadesk/ingest"
)

func csvFile(b *testing.B, rows int) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "t.csv")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := WriteCSV(f, rows); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return p
}

// BenchmarkCSVIngest measures a whole CSV ingest (detect the dialect, read
// the file once into its typed table with every value checked, commit)
// beside its baseline in the same run: reading the same file with
// encoding/csv and nothing else.
func BenchmarkCSVIngest(b *testing.B) {
	for _, rows := range []int{10_000, 100_000} {
		path := csvFile(b, rows)
		b.Run(fmt.Sprintf("rows=%d/baseline=parse-only", rows), func(b *testing.B) {
			for b.Loop() {
				f, _ := os.Open(path)
				r := csv.NewReader(f)
				r.ReuseRecord = true
				for {
					if _, err := r.Read(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
				f.Close()
			}
		})
		b.Run(fmt.Sprintf("rows=%d/datadesk", rows), func(b *testing.B) {
			e, err := engine.New(engine.Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()
			s, release, err := e.Acquire(ctx, datadesk.NewID("u"))
			if err != nil {
				b.Fatal(err)
			}
			defer release()
			in := ingest.New(ingest.Config{})
			data, _ := os.ReadFile(path)
			for b.Loop() {
				tmp := filepath.Join(s.IncomingDir(), "up")
				if err := os.WriteFile(tmp, data, 0o600); err != nil {
					b.Fatal(err)
				}
				res, err := in.Read(ctx, tmp, "t.csv", s.IncomingDir())
				if err != nil {
					b.Fatal(err)
				}
				f, err := s.AddFile(ctx, engine.NewFile{Filename: "t.csv", TempPath: tmp, Tables: res.Tables})
				if err != nil {
					b.Fatal(err)
				}
				if f.Tables[0].Columns[0].Type != typing.TypeText {
					b.Fatalf("order_id typed %s", f.Tables[0].Columns[0].Type)
				}
			}
		})
	}
}
