package apitest

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"datadesk/internal/testenv"
)

// VMKB reads a line of /proc/self/status in kB.
func VMKB(t *testing.T, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		testenv.Missing(t, "no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	testenv.Missing(t, "no %s in /proc/self/status", field)
	return 0
}

// MemoryPeaks runs f and returns how far the process's resident memory and
// Go's heap in use rose above their levels before it, at their highest. A test
// that measures with it must not run in parallel with others.
func MemoryPeaks(t *testing.T, f func()) (rss, heap int64) {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapBefore, rssBefore := int64(ms.HeapInuse), VMKB(t, "VmRSS")<<10
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
			rssPeak.Store(max(rssPeak.Load(), VMKB(t, "VmRSS")<<10))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	f()
	stop.Store(true)
	<-sampled
	peak := rssPeak.Load()
	if reset {
		peak = max(peak, VMKB(t, "VmHWM")<<10)
	}
	return peak - rssBefore, heapPeak.Load() - heapBefore
}
