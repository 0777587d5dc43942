package api

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"datadesk/engine"
	"datadesk/rbac"
)

// createBody is a files.create call of rows rows, each row written by row.
func createBody(filename string, width, rows int, row func(i int) string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"arguments":{"filename":"` + filename + `","columns":[`)
	for i := range width {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"c` + strconv.Itoa(i) + `"`)
	}
	b.WriteString(`],"rows":[`)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row(i))
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// memoryPeaks runs f and returns how far the process's resident memory and
// Go's heap in use rose above their levels before it, at their highest.
func memoryPeaks(t *testing.T, f func()) (rss, heap int64) {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapBefore, rssBefore := int64(ms.HeapInuse), vmKB(t, "VmRSS")<<10
	// The kernel's peak is reset when it can be; where it cannot, the
	// peak is the highest resident size sampled.
	reset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	var stop atomic.Bool
	var heapPeak, rssPeak atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for !stop.Load() {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heapPeak.Store(max(heapPeak.Load(), int64(ms.HeapInuse)))
			rssPeak.Store(max(rssPeak.Load(), vmKB(t, "VmRSS")<<10))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	f()
	stop.Store(true)
	<-sampled
	peak := rssPeak.Load()
	if reset {
		peak = max(peak, vmKB(t, "VmHWM")<<10)
	}
	return peak - rssBefore, heapPeak.Load() - heapBefore
}

// TestFilesCreateMemoryBounded: a 25.7 MB files.create call (50,000 rows of
// 256 zeros) peaked at 3.26 GB, about 127 times its body, and a viewer's
// 51 MB call added 2 GB before its 413. Rows are now read a row at a time
// from the body (to check, type and write them, and to load the table,
// which DuckDB's query appender takes from them a batch at a time): the
// server's own memory stays within 8 times the body, and the whole
// process's too for a table of ordinary values. A table of 256 columns of
// one-digit numbers is the exception for the whole process: DuckDB holds
// a table being loaded in blocks per column for values and again for
// their validity (96 MiB for these 12.8 million values with the owners'
// blocks of 64 KiB, 194 MiB with DuckDB's default of 256 KiB), and its
// process grows 160 MB making this table from SQL alone (CREATE TABLE AS
// of range(), no Go at all). Measured: the process grows about 10 times
// this body (13 with blocks of 256 KiB; 18 when the table was read from a
// CSV file by DuckDB's parallel reader).
func TestFilesCreateMemoryBounded(t *testing.T) {
	// The limit on a waiting call is set below the body, as the default
	// is below the 51 MB call that found this.
	ts, users := newServerFull(t, Config{MaxPendingCall: 16 << 20}, rbac.DefaultPolicy, engine.Config{})
	ana := addUser(t, users, "ana", "analyst")
	vic := addUser(t, users, "vic", "viewer")
	zeros := "[" + strings.TrimSuffix(strings.Repeat("0,", 256), ",") + "]"
	for _, tc := range []struct {
		name     string
		token    string
		body     func() []byte
		code     int
		wholeRSS bool // the whole process's growth is bounded too
	}{
		{"analyst, 256 columns of zeros", ana, func() []byte { return createBody("zeros.csv", 256, 50_000, func(int) string { return zeros }) }, http.StatusOK, false},
		{"analyst, ordinary values, CSV", ana, func() []byte {
			return createBody("orders.csv", 12, 50_000, func(i int) string {
				return fmt.Sprintf(`["ORD-%08d","%05d","customer %d of the north region, account manager %d, %s",%d.%02d,"2024-%02d-%02d",%d,true,"note %d: %s","+44 20 7946 %04d","%s",%d,"wrapped and sent by express, %s"]`,
					i, i%99999, i%7919, i%97, strings.Repeat("long text ", 8), i%5000, i%100, 1+i%12, 1+i%28, i%20, i, strings.Repeat("more ", 12),
					i%10000, []string{"North", "South", "East"}[i%3], i*7, strings.Repeat("careful ", 6))
			})
		}, http.StatusOK, true},
		{"viewer past the waiting limit", vic, func() []byte { return createBody("zeros.csv", 256, 50_000, func(int) string { return zeros }) }, http.StatusRequestEntityTooLarge, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body()
			var code int
			var raw []byte
			rss, heap := memoryPeaks(t, func() {
				code, _, raw = ts.do("POST", "/v1/tools/files.create", tc.token, bytes.NewReader(body), "application/json")
			})
			if code != tc.code {
				t.Fatalf("got %d %.300s, want %d", code, raw, tc.code)
			}
			size := float64(len(body))
			t.Logf("body %.1f MB; peak growth: Go heap %.1f MB (%.1fx), process %.1f MB (%.1fx)",
				size/1e6, float64(heap)/1e6, float64(heap)/size, float64(rss)/1e6, float64(rss)/size)
			if float64(heap) > 8*size {
				t.Errorf("the server's heap grew %.1f times the body; at most 8", float64(heap)/size)
			}
			if tc.wholeRSS && float64(rss) > 8*size {
				t.Errorf("the process's memory grew %.1f times the body; at most 8", float64(rss)/size)
			}
		})
	}
}
