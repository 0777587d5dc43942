package engine

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
)

// fillCatalog gives the owner n more files like f, each with a table like
// f's first, of size bytes each, as the catalog's rows alone: a listing
// reads the catalog, and adding them one by one would take a minute.
func fillCatalog(t *testing.T, s *Store, f *catalog.File, n int, size int64) {
	t.Helper()
	ctx := context.Background()
	tbl := f.Tables[0].ID
	for _, q := range []string{
		`INSERT INTO dd_files SELECT 'f_bulk' || i, 'sales ' || i || '.csv', content_type, ?, sha256,
			CASE WHEN i % 10 = 0 THEN 'chat-' || (i // 10 % 30) ELSE '' END, created_at - to_seconds(i) FROM dd_files, range(?) r(i) WHERE id = ?`,
		`INSERT INTO dd_tables SELECT 't_bulk' || i, 'f_bulk' || i, ordinal, name || i, row_count + i, report, kind, source_table_id, query,
			created_at, location FROM dd_tables, range(?) r(i) WHERE id = ?`,
		`INSERT INTO dd_columns SELECT 't_bulk' || i, ordinal, key, label, type, identifier, reason, digits, unit FROM dd_columns, range(?) r(i) WHERE table_id = ?`,
	} {
		args := []any{n, tbl}
		if q[12:20] == "dd_files" {
			args = []any{size, n, f.ID}
		}
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOwnerLimitsAtTheirLargest: with 3,000 files every files page took
// 2.9 s, the whole list and each file's tables read for 25 shown; nothing
// bounded an owner's files, saved views or bytes. An owner at each limit,
// MaxFiles files of MaxOwnerBytes together and MaxViews saved views: a
// page of its files, in any order or search, costs what the page holds,
// and one more file or view is refused.
func TestOwnerLimitsAtTheirLargest(t *testing.T) {
	// Serial: it measures the process's heap, which tests beside it
	// would grow.
	e, err := New(Config{Dir: t.TempDir(), MemoryLimit: "256MB", MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	f, err := s.AddFile(ctx, NewFile{Filename: "sales.csv", ContentType: "text/csv", TempPath: tempBytes(t, s, "a,b\n1,2\n"),
		Tables: []TableSource{rowsSource("sales", []string{"a", "b"}, [][]string{{"1", "2"}})}})
	if err != nil {
		t.Fatal(err)
	}
	// One file short of the limit, of the storage limit's bytes together
	// but for a little room.
	fillCatalog(t, s, f, MaxFiles-2, (DefaultMaxOwnerBytes-(64<<20))/(MaxFiles-2))

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap := ms.HeapAlloc
	for _, q := range []FileQuery{
		{Sort: "date", Limit: 25},
		{Sort: "date", Offset: MaxFiles, Limit: 25},
		{Sort: "name", Offset: 1000, Limit: 25},
		{Sort: "size", Limit: 25},
		{Sort: "rows", Limit: 25},
		{Sort: "date", Search: "SALES 19", Limit: 25},
		{Sort: "rows", Session: "chat-3", Limit: 25},
	} {
		start := time.Now()
		page, err := s.FilesPage(ctx, q)
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Files) == 0 || len(page.Files) > 25 || page.Total < len(page.Files) || len(page.Files[len(page.Files)-1].Tables) != 1 {
			t.Errorf("%+v: %d files of %d, %d tables on the first", q, len(page.Files), page.Total, len(page.Files[len(page.Files)-1].Tables))
		}
		t.Logf("%+v: %d of %d files from %d in %v", q, len(page.Files), page.Total, page.Offset, took)
		if took > 250*time.Millisecond {
			t.Errorf("%+v took %v, want a page's cost (under 250 ms)", q, took)
		}
	}
	runtime.ReadMemStats(&ms)
	if grew := int64(ms.HeapAlloc) - int64(heap); grew > 16<<20 {
		t.Errorf("the pages allocated %d MiB", grew>>20)
	}
	sessions, err := s.ChatSessions(ctx)
	if err != nil || len(sessions) != 30 {
		t.Errorf("chat sessions: %v %v", sessions, err)
	}

	// One more file fits the count, whose bytes pass the storage limit.
	_, err = s.AddFile(ctx, NewFile{Filename: "big.txt", ContentType: "text/plain", TempPath: tempBytes(t, s, "x"), Size: 128 << 20})
	if datadesk.ErrorCode(err) != datadesk.TooLarge {
		t.Errorf("a file past the storage limit: %v, want too_large", err)
	}
	if _, err := s.AddFile(ctx, NewFile{Filename: "small.txt", ContentType: "text/plain", TempPath: tempBytes(t, s, "x")}); err != nil {
		t.Fatalf("the last file the limits allow: %v", err)
	}
	_, err = s.AddFile(ctx, NewFile{Filename: "one more.txt", ContentType: "text/plain", TempPath: tempBytes(t, s, "x")})
	if datadesk.ErrorCode(err) != datadesk.TooLarge {
		t.Errorf("file %d: %v, want too_large", MaxFiles+1, err)
	}

	start := time.Now()
	for i := range MaxViews {
		if _, err := s.SaveView(ctx, f.Tables[0].ID, fmt.Sprintf("view %d", i), "q=x"); err != nil {
			t.Fatalf("view %d: %v", i+1, err)
		}
	}
	t.Logf("%d views saved in %v", MaxViews, time.Since(start))
	if _, err := s.SaveView(ctx, f.Tables[0].ID, "one more", "q=x"); datadesk.ErrorCode(err) != datadesk.TooLarge {
		t.Errorf("view %d: %v, want too_large", MaxViews+1, err)
	}
	start = time.Now()
	views, err := s.SavedViews(ctx)
	if err != nil || len(views) != MaxViews {
		t.Errorf("saved views: %d %v", len(views), err)
	}
	if took := time.Since(start); took > 250*time.Millisecond {
		t.Errorf("listing %d saved views took %v", MaxViews, took)
	}
}
