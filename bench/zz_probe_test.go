package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine"
	"datadesk/ingest"
)

func TestZZProbe(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZZROWS"))
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	fh, _ := os.Create(filepath.Join(dir, "in", "table.csv"))
	WriteCSV(fh, n)
	fh.Close()
	fh, _ = os.Create(filepath.Join(dir, "in", "table.json"))
	enc := json.NewEncoder(fh)
	rec := map[string]string{}
	for i := 0; i < n; i++ {
		for j, v := range Row(i) {
			rec[Header[j]] = v
		}
		enc.Encode(rec)
	}
	fh.Close()
	ctx := context.Background()
	ecfg := engine.Config{Dir: filepath.Join(dir, "data"), MemoryLimit: "2GB"}
	eng, _ := engine.New(ecfg)
	defer eng.Close()
	store, release, _ := eng.Acquire(ctx, datadesk.NewID("u"))
	defer release()
	base, err := engine.OpenBaseline(ctx, ecfg, dir, filepath.Join(dir, "in"))
	if err != nil {
		t.Fatal(err)
	}
	in := ingest.New(ingest.Config{})
	for _, name := range []string{"table.csv", "table.json"} {
		for rep := 0; rep < 2; rep++ {
			t0 := time.Now()
			fn := "read_csv"
			if name == "table.json" {
				fn = "read_json"
			}
			if err := base.Exec(ctx, `CREATE OR REPLACE TABLE t AS SELECT * FROM `+fn+`({path})`, filepath.Join(dir, "in", name)); err != nil {
				t.Fatal(err)
			}
			tb := time.Since(t0)
			t0 = time.Now()
			data, _ := os.ReadFile(filepath.Join(dir, "in", name))
			tmp := filepath.Join(store.IncomingDir(), datadesk.NewID("up"))
			os.WriteFile(tmp, data, 0o600)
			tc := time.Since(t0)
			res, err := in.Read(ctx, tmp, name, store.IncomingDir())
			if err != nil {
				t.Fatal(err)
			}
			tr := time.Since(t0)
			f, err := store.AddFile(ctx, engine.NewFile{Filename: name, ContentType: res.ContentType, TempPath: tmp, Tables: res.Tables})
			if err != nil {
				t.Fatal(err)
			}
			td := time.Since(t0)
			t.Logf("%s base %v datadesk %v (copy %v read %v) ratio %.2f fast=%v %v", name, tb, td, tc, tr-tc, float64(td)/float64(tb), res.Tables[0].JSON != nil, f.Tables[0].Columns)
			store.DeleteFile(ctx, f.ID)
		}
	}
}
