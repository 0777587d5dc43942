package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"datadesk/api/apitest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
)

// TestMetricLabelsClosed: the HTTP method as a client sent it was a label
// of datadesk_http_requests_total, counted before authentication, so 400
// requests with made-up methods of 500 KB grew a node by 340 MB for good
// and its /metrics answer to 200 MB. Every label of every metric now comes
// from a closed set (a method the server does not know is "other"): made-up
// methods, paths and tool names, with and without a token, add no series,
// no bytes to /metrics and no memory that stays.
func TestMetricLabelsClosed(t *testing.T) {
	// Not parallel: it measures the process's memory, which other tests would add to.
	ts, token, fileID := apitest.SetupOrders(t)
	// The series the ordinary requests make, and the memory held after
	// them.
	ts.Call(token, "files.query_table", map[string]any{"file_id": fileID})
	before := scrapeMetrics(t, ts)
	heapBefore := heapAfterGC()

	const n, size = 64, 256 << 10
	for i := range n {
		method := strings.Repeat(string(rune('A'+i%26)), size-1) + fmt.Sprint(i%10)
		for _, path := range []string{"/v1/files", "/files", fmt.Sprintf("/no/such/path/%d", i)} {
			req, _ := http.NewRequest(method, ts.URL+path, nil)
			if i%2 == 0 {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	for i := range n {
		made := fmt.Sprintf("files.no_such_tool_%d_%s", i, strings.Repeat("x", 1024))
		ts.Call(token, made, map[string]any{})
		ts.Do("GET", fmt.Sprintf("/v1/tables/%s%d/rows", strings.Repeat("z", 1024), i), token, nil, "")
		ts.Do("GET", fmt.Sprintf("/tables/t%d/group.xlsx", i), "", nil, "")
	}
	cs := apitest.MCPTransports["http"](t, ts, token)
	for i := range 8 {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: fmt.Sprintf("made_up_%d_%s", i, strings.Repeat("y", 4096))})
	}

	after := scrapeMetrics(t, ts)
	allowed := closedLabels(ts)
	for _, s := range after.series {
		name, labels := s[0], s[1:]
		for i := 0; i+1 < len(labels); i += 2 {
			set, ok := allowed[labels[i]]
			if !ok {
				t.Errorf("%s: label %q has no closed set of values", name, labels[i])
				continue
			}
			if !set[labels[i+1]] {
				t.Errorf("%s: label %s=%.40q is not one of its closed set", name, labels[i], labels[i+1])
			}
		}
	}
	// A made-up request counts under "other" and "unmatched", which may be
	// new; nothing else is.
	if grew := len(after.series) - len(before.series); grew > 40 {
		t.Errorf("made-up requests added %d series", grew)
	}
	if after.bytes > 256<<10 {
		t.Errorf("/metrics answered %d KiB after made-up requests, want under 256 KiB", after.bytes>>10)
	}
	grew := heapAfterGC() - heapBefore
	t.Logf("/metrics %d KiB (before %d KiB), %d series (before %d); heap after GC grew %d KiB after %d MiB of made-up methods",
		after.bytes>>10, before.bytes>>10, len(after.series), len(before.series), grew>>10, n*3*size>>20)
	if grew > 8<<20 {
		t.Errorf("the heap kept %d MiB after %d MiB of made-up methods", grew>>20, n*3*size>>20)
	}
}

// scraped is a /metrics answer: its size and each datadesk series as its
// name followed by label names and values.
type scraped struct {
	bytes  int
	series [][]string
}

func scrapeMetrics(t *testing.T, ts *apitest.Server) scraped {
	t.Helper()
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := scraped{bytes: len(body)}
	fams, err := ts.Server.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "datadesk_") {
			continue
		}
		for _, m := range f.GetMetric() {
			s := []string{f.GetName()}
			for _, l := range m.GetLabel() {
				s = append(s, l.GetName(), l.GetValue())
			}
			out.series = append(out.series, s)
		}
	}
	return out
}

// closedLabels is each label's closed set of values.
func closedLabels(ts *apitest.Server) map[string]map[string]bool {
	set := func(vs ...string) map[string]bool {
		m := map[string]bool{}
		for _, v := range vs {
			m[v] = true
		}
		return m
	}
	routes := set("unmatched")
	for _, r := range ts.Server.Echo().Router().Routes() {
		routes[r.Path] = true
	}
	tools := set()
	for _, tool := range ts.Server.Calls().Tools() {
		tools[tool.Name] = true
	}
	outcomes := set("ok", "pending")
	for _, c := range []datadesk.Code{datadesk.Invalid, datadesk.Unauthenticated, datadesk.Forbidden, datadesk.NotFound,
		datadesk.Conflict, datadesk.TooLarge, datadesk.Unsupported, datadesk.Timeout, datadesk.RateLimited,
		datadesk.Misdirected, datadesk.Unavailable, datadesk.Internal} {
		outcomes[string(c)] = true
	}
	return map[string]map[string]bool{
		"method":    set("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "other"),
		"route":     routes,
		"class":     set("1xx", "2xx", "3xx", "4xx", "5xx"),
		"tool":      tools,
		"outcome":   outcomes,
		"operation": set("table_move", "backup"),
		"state":     set("ready", "degraded", "not_ready"),
	}
}

// heapAfterGC is the Go heap in use once garbage is collected.
func heapAfterGC() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}
