package api_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"datadesk"

	"github.com/labstack/echo/v5"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/cluster"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/engine/clickhouse"
	"datadesk/engine/clickhousetest"
	"datadesk/exports"
	"datadesk/internal/testenv"
)

// TestMetrics: /metrics speaks Prometheus's text format and counts tool
// calls by tool and outcome, with their latency and the gauges an
// operator watches.
func TestMetrics(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	ts.Call(token, "files.query_table", map[string]any{"file_id": fileID})
	ts.Call(token, "files.query_table", map[string]any{"file_id": fileID, "group_by": []any{"colour"}})
	ts.Call(token, "files.analyze_table", map[string]any{"file_id": fileID, "measures": []any{map[string]any{"op": "count"}}})
	_, q := ts.Call(token, "files.query_table", map[string]any{"file_id": fileID, "limit": 1})
	code, _, csv := ts.Do("GET", "/v1/tables/"+fmt.Sprint(q["result"].(map[string]any)["table_id"])+"/export?format=csv", token, nil, "")
	if code != http.StatusOK || len(csv) == 0 {
		t.Fatalf("export: %d %v", code, q)
	}
	// Probes and scrapes: counted apart from the callers' requests.
	for _, path := range []string{"/healthz", "/healthz", "/readyz", "/metrics"} {
		if code, _, _ := ts.Do("GET", path, "", nil, ""); code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
	}
	ts.Server.RecordOperation("backup", nil, 1500*time.Millisecond)
	ts.Server.RecordOperation("table_move", datadesk.Errorf(datadesk.Unavailable, "shard down"), time.Second)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// What promtool check metrics reports: names, units, help.
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, want := range []string{
		`datadesk_tool_calls_total{outcome="ok",tool="files.query_table"} 2`,
		`datadesk_tool_calls_total{outcome="invalid",tool="files.query_table"} 1`,
		`datadesk_tool_calls_total{outcome="ok",tool="files.analyze_table"} 1`,
		`datadesk_tool_call_duration_seconds_count{tool="files.query_table"} 3`,
		`datadesk_http_requests_total{class="2xx",method="POST",route="/v1/tools/:name"} 3`,
		`datadesk_http_requests_total{class="4xx",method="POST",route="/v1/tools/:name"} 1`,
		`datadesk_http_request_duration_seconds_count{route="/v1/tools/:name"} 4`,
		`datadesk_audit_failures_total 0`,
		`datadesk_open_owners 1`,
		`datadesk_approvals_pending 0`,
		"datadesk_duckdb_memory_bytes ",
		"process_resident_memory_bytes ",
		"go_memstats_heap_inuse_bytes ",
		fmt.Sprintf(`datadesk_http_response_body_bytes_total{route="/v1/tables/:id/export"} %d`, len(csv)),
		`datadesk_http_request_body_bytes_total{route="/v1/tools/:name"} `,
		`datadesk_operations_total{operation="backup",outcome="ok"} 1`,
		`datadesk_operations_total{operation="table_move",outcome="unavailable"} 1`,
		`datadesk_operation_duration_seconds_count{operation="backup"} 1`,
		"datadesk_last_backup_timestamp_seconds 1",
		`datadesk_probe_requests_total{class="2xx",route="/healthz"} 2`,
		`datadesk_probe_requests_total{class="2xx",route="/readyz"} 1`,
		`datadesk_probe_requests_total{class="2xx",route="/metrics"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for _, line := range strings.Split(string(body), "\n") {
		for _, route := range []string{"/healthz", "/readyz", "/metrics"} {
			if strings.HasPrefix(line, "datadesk_http_") && strings.Contains(line, `route="`+route+`"`) {
				t.Errorf("the callers' requests count a probe: %s", line)
			}
		}
	}
}

// TestReadyz: /readyz names each dependency and answers 503 not_ready
// when one the node cannot serve without is down; /healthz stays a
// liveness check.
func TestReadyz(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	ts := apitest.New(t, apitest.Options{Config: api.Config{SharedDir: shared}})
	ready := func() (int, map[string]any) {
		code, m, _ := ts.Do("GET", "/readyz", "", nil, "")
		return code, m
	}
	code, m := ready()
	if code != http.StatusOK || m["status"] != "ready" {
		t.Fatalf("readyz: %d %v", code, m)
	}
	var names []string
	for _, c := range m["checks"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, ", "); got != "owners' storage, server database, shared directory" {
		t.Errorf("checks %s", got)
	}
	if err := os.RemoveAll(shared); err != nil {
		t.Fatal(err)
	}
	code, m = ready()
	if code != http.StatusServiceUnavailable || m["status"] != "not_ready" || !strings.Contains(apitest.MustJSON(m), "cannot be written") {
		t.Errorf("readyz with the shared directory gone: %d %v", code, m)
	}
	if code, _, _ := ts.Do("GET", "/healthz", "", nil, ""); code != http.StatusOK {
		t.Errorf("healthz: %d", code)
	}
	// Through the proxy, which names its client, the status alone: the
	// checks name addresses and carry error texts.
	req, _ := http.NewRequest("GET", ts.URL+"/readyz", nil)
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || string(raw) != `{"status":"not_ready"}`+"\n" {
		t.Errorf("readyz for a client of the proxy: %d %s, want 503 and the status alone", resp.StatusCode, raw)
	}
}

// TestExportCutShort: an export that fails after its first byte ends the
// connection without the chunked body's last chunk, so the client sees a
// failed transfer, never a short file that looks whole.
func TestExportCutShort(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	cols := []catalog.Column{{Key: "id", Type: "text"}, {Key: "n", Type: "integer"}}
	src := exports.Source{Columns: cols, Count: 300000, Rows: func(yield func([]any) error) error {
		for i := range 200000 {
			if err := yield([]any{fmt.Sprintf("%06d", i), int64(i)}); err != nil {
				return err
			}
		}
		return errors.New("the storage went away")
	}}
	for _, format := range []string{"csv", "xlsx", "json"} {
		ts.Server.Echo().GET("/cut."+format, func(c *echo.Context) error {
			return ts.Server.StreamExport(c, format, "cut", src, exports.Options{SheetName: "cut"})
		})
		t.Run(format, func(t *testing.T) {
			resp, err := http.Get(ts.URL + "/cut." + format)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// Failed before its first byte, the export is an error answer;
			// after it, a failed transfer. Never a 200 that ends cleanly.
			n, err := io.Copy(io.Discard, resp.Body)
			if resp.StatusCode == http.StatusOK && err == nil {
				t.Fatalf("status 200 and %d bytes that end cleanly: want an error or a failed transfer", n)
			}
			t.Logf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		})
	}
}

// TestShardDownSaysSo: with a shard of the ClickHouse cluster killed, a
// query of a table on the cluster and an export of it answer 503
// unavailable naming the shard, /readyz says the node is degraded naming
// it, and the metrics count the failed calls.
func TestShardDownSaysSo(t *testing.T) {
	t.Parallel()
	c, ts, token := onTwoShards(t, 1<<20)
	code, up := ts.Upload(token, "orders.csv", []byte(apitest.RowsCSV(2000)))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	file := up["file"].(map[string]any)
	if code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": file["id"]}); code != http.StatusOK {
		t.Fatalf("query before: %d %v", code, m)
	}
	c.Kill(1)
	code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": file["id"], "group_by": []any{"id"}})
	if code != http.StatusServiceUnavailable || apitest.ErrCode(m) != "unavailable" {
		t.Errorf("query with a shard down: %d %v, want 503 unavailable", code, m)
	}
	t.Logf("answer: %v", m)
	code, m, _ = ts.Do("GET", "/v1/tables/"+file["table_id"].(string)+"/export?format=csv", token, nil, "")
	if code != http.StatusServiceUnavailable || apitest.ErrCode(m) != "unavailable" {
		t.Errorf("export with a shard down: %d %v, want 503 unavailable", code, m)
	}
	// The node still serves its owners' DuckDB tables: degraded, saying
	// what does not work, not unready.
	code, m, _ = ts.Do("GET", "/readyz", "", nil, "")
	if code != http.StatusOK || m["status"] != "degraded" || !strings.Contains(apitest.MustJSON(m["degraded"]), "clickhouse node 2 ("+c.Nodes[1]+")") {
		t.Errorf("readyz with a shard down: %d %v, want 200 degraded naming the shard", code, m)
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "datadesk_clickhouse_failures_total ") || strings.Contains(string(body), "datadesk_clickhouse_failures_total 0\n") {
		t.Errorf("metrics do not count the failures")
	}
	for i, want := range []string{"1", "0"} {
		if line := `datadesk_clickhouse_node_up{node="` + c.Nodes[i] + `"} ` + want; !strings.Contains(string(body), line+"\n") {
			t.Errorf("metrics lack %s", line)
		}
	}
}

// TestShardKilledDuringExport: the ClickHouse node an export streams from
// dies while the client is part-way through the body: the client sees a
// failed transfer (the body ends without its last chunk), never a cleanly
// ended, shorter file.
func TestShardKilledDuringExport(t *testing.T) {
	t.Parallel()
	c, ts, token := onTwoShards(t, 64<<20)
	const rows = 400_000
	var csv bytes.Buffer
	csv.WriteString("id,region,note\n")
	note := strings.Repeat("a note long enough to fill the pipes ", 2)
	for i := range rows {
		fmt.Fprintf(&csv, "%d,r%d,%s%d\n", i, i%7, note, i)
	}
	code, up := ts.Upload(token, "big.csv", csv.Bytes())
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	table := up["file"].(map[string]any)["table_id"].(string)
	req, _ := http.NewRequest("GET", ts.URL+"/v1/tables/"+table+"/export?format=csv", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export: %d", res.StatusCode)
	}
	first := make([]byte, 64<<10)
	if _, err := io.ReadFull(res.Body, first); err != nil {
		t.Fatal(err)
	}
	// The node statements go to first: the one the rows stream from.
	c.Kill(0)
	rest, err := io.ReadAll(res.Body)
	lines := bytes.Count(first, []byte("\n")) + bytes.Count(rest, []byte("\n"))
	if err == nil {
		t.Fatalf("the export ended cleanly with %d of %d lines after its node died", lines, rows+1)
	}
	t.Logf("the client saw %v after %d of %d lines", err, lines, rows+1)
}

// onTwoShards starts two ClickHouse shards (stopped when the test ends)
// and a server that stores every uploaded table on them, with an
// analyst's token.
func onTwoShards(t *testing.T, maxUpload int64) (*clickhousetest.Cluster, *apitest.Server, string) {
	t.Helper()
	c, err := clickhousetest.Start(2)
	if errors.Is(err, clickhousetest.ErrNoServer) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: c.Database})
	if err != nil {
		t.Fatal(err)
	}
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: maxUpload}, Engine: engine.Config{MemoryLimit: "256MB", MaxTempSize: "1GB", Remote: ch, RemoteMinRows: 1}})
	users := ts.Users
	return c, ts, apitest.AddUser(t, users, "ana", "analyst")
}

// TestReadyzToRouteBy: /readyz is what a proxy routes a node's owners by.
// A dead peer and a hung one used to make every other node answer 503
// while it served its owners; they are now reported apart, the answer
// still 200, within the probes' deadline. Low free space, which an empty
// file's creation does not notice, is a 503 naming the directory.
func TestReadyzToRouteBy(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it would stretch.
	hung := hungNode(t)
	ring, err := cluster.ParseNodes("n1=127.0.0.1:1,n2=127.0.0.1:9,n3=" + hung)
	if err != nil {
		t.Fatal(err)
	}
	ts := apitest.New(t, apitest.Options{Config: api.Config{Cluster: api.ClusterConfig{Ring: ring, Self: "n1", Key: bytes.Repeat([]byte("c"), 32)}}})
	start := time.Now()
	code, m, _ := ts.Do("GET", "/readyz", "", nil, "")
	if code != http.StatusOK || m["status"] != "ready" {
		t.Fatalf("readyz with a dead and a hung peer: %d %v", code, m)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("readyz took %v", took)
	}
	peers := apitest.MustJSON(m["peers"])
	if !strings.Contains(peers, "cannot be reached") || !strings.Contains(peers, "did not answer within") {
		t.Errorf("the peers reported: %s", peers)
	}

	low := apitest.New(t, apitest.Options{Config: api.Config{ReadyMinFree: 1 << 62}})
	code, m, _ = low.Do("GET", "/readyz", "", nil, "")
	if code != http.StatusServiceUnavailable || !strings.Contains(apitest.MustJSON(m), "less than the") {
		t.Errorf("readyz with less free space than asked: %d %v", code, m)
	}
}

// TestReadyzBlamesTheHungDependency: a ClickHouse node that accepts
// connections and never answers is the check that fails, within its own
// deadline, and the node's storage and database are still seen ready:
// the node is degraded (200, saying what does not work), not unready.
func TestReadyzBlamesTheHungDependency(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it would stretch.
	ch, err := clickhouse.New(clickhouse.Config{Nodes: []string{"http://" + hungNode(t)}, Cluster: "datadesk", Database: "datadesk"})
	if err != nil {
		t.Fatal(err)
	}
	ts := apitest.New(t, apitest.Options{Engine: engine.Config{MemoryLimit: "256MB", MaxTempSize: "1GB", Remote: ch}})
	start := time.Now()
	code, m, _ := ts.Do("GET", "/readyz", "", nil, "")
	took := time.Since(start)
	if code != http.StatusOK || m["status"] != "degraded" || !strings.Contains(apitest.MustJSON(m["degraded"]), "tables on the ClickHouse cluster cannot be read or written") {
		t.Fatalf("readyz with a hung ClickHouse node: %d %v, want 200 degraded saying what does not work", code, m)
	}
	for _, x := range m["checks"].([]any) {
		ck := x.(map[string]any)
		name, ok := ck["name"].(string), ck["ok"] == true
		if strings.HasPrefix(name, "clickhouse node") == ok {
			t.Errorf("check %s: ok %v (%v)", name, ok, ck["error"])
		}
	}
	t.Logf("readyz with a hung ClickHouse node answered in %v", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("readyz took %v, past its probes' deadline", took)
	}
}

// TestReadyzZooKeeperDown: with replicated cluster tables, one shard of
// two replicas. A replica down fails no call: a query of a cluster table
// answers through the other, counted as a failover, never as a failed
// call. With ZooKeeper killed too the cluster takes no writes: /readyz
// answers 200 degraded naming ZooKeeper and what does not work, within
// the probes' deadline, the shard still answering, and the metrics say so.
func TestReadyzZooKeeperDown(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it would stretch.
	c, err := clickhousetest.StartReplicated(1, 2)
	if errors.Is(err, clickhousetest.ErrNoServer) || errors.Is(err, clickhousetest.ErrNoZooKeeper) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: c.Database, Replicas: c.Replicas})
	if err != nil {
		t.Fatal(err)
	}
	ts := apitest.New(t, apitest.Options{Engine: engine.Config{MemoryLimit: "256MB", MaxTempSize: "1GB", Remote: ch, RemoteMinRows: 1}})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, up := ts.Upload(token, "orders.csv", []byte(apitest.RowsCSV(200)))
	if code != http.StatusCreated {
		t.Fatalf("upload to the cluster: %d %v", code, up)
	}
	check := func() (int, map[string]any, map[string]string, time.Duration) {
		start := time.Now()
		code, m, _ := ts.Do("GET", "/readyz", "", nil, "")
		took := time.Since(start)
		checks := map[string]string{}
		for _, x := range m["checks"].([]any) {
			ck := x.(map[string]any)
			checks[ck["name"].(string)] = fmt.Sprint(ck["ok"], " ", ck["error"])
		}
		return code, m, checks, took
	}
	code, m, checks, _ := check()
	if code != http.StatusOK || m["status"] != "ready" || !strings.HasPrefix(checks["zookeeper (through clickhouse)"], "true") {
		t.Fatalf("readyz with ZooKeeper up: %d %v", code, checks)
	}
	metric := func(name string) string {
		_, _, body := ts.Do("GET", "/metrics", "", nil, "")
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, name+" ") {
				return line
			}
		}
		return "no " + name
	}
	if got := metric("datadesk_zookeeper_up"); got != "datadesk_zookeeper_up 1" {
		t.Errorf("with ZooKeeper up the metrics say %q", got)
	}
	c.Kill(0)
	for range 3 {
		if code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": up["file"].(map[string]any)["id"]}); code != http.StatusOK {
			t.Fatalf("a query with a replica down: %d %v", code, m)
		}
	}
	if got, fo := metric("datadesk_clickhouse_failures_total"), metric("datadesk_clickhouse_failovers_total"); got != "datadesk_clickhouse_failures_total 0" || fo == "datadesk_clickhouse_failovers_total 0" {
		t.Errorf("with a replica down and no call failed: %q and %q, want no failed call and some failovers", got, fo)
	}
	c.KillZooKeeper()
	if got := metric("datadesk_zookeeper_up"); got != "datadesk_zookeeper_up 0" {
		t.Errorf("with ZooKeeper down the metrics say %q", got)
	}
	code, m, checks, took := check()
	t.Logf("readyz with ZooKeeper down: %d in %v, %v", code, took.Round(time.Millisecond), checks["zookeeper (through clickhouse)"])
	if code != http.StatusOK || m["status"] != "degraded" || !strings.HasPrefix(checks["zookeeper (through clickhouse)"], "false") ||
		!strings.Contains(apitest.MustJSON(m["degraded"]), "take no writes") {
		t.Errorf("readyz with ZooKeeper down: %d %v, want 200 degraded blaming ZooKeeper", code, m)
	}
	for name, v := range checks {
		if strings.HasPrefix(name, "clickhouse shard") && !strings.HasPrefix(v, "true") {
			t.Errorf("%s blamed with ZooKeeper down: %s", name, v)
		}
	}
	if took > 5*time.Second {
		t.Errorf("readyz took %v, past its probes' deadline", took)
	}
	if got := metric(`datadesk_readiness{state="degraded"}`); got != `datadesk_readiness{state="degraded"} 1` {
		t.Errorf("with ZooKeeper down the metrics say %q", got)
	}
}

// TestApprovalListWithAHungPeer: the approvers' list waited up to 60 s on
// a hung node. It now asks every node at once for at most a few seconds
// and answers with what it has, naming the node that did not answer.
func TestApprovalListWithAHungPeer(t *testing.T) {
	// Not parallel: it compares times, which other tests running beside it would stretch.
	hung := hungNode(t)
	ring, err := cluster.ParseNodes("n1=127.0.0.1:1,n2=" + hung)
	if err != nil {
		t.Fatal(err)
	}
	ts := apitest.New(t, apitest.Options{Config: api.Config{Cluster: api.ClusterConfig{Ring: ring, Self: "n1", Key: bytes.Repeat([]byte("c"), 32)}}})
	users := ts.Users
	// An approver this node holds.
	var root string
	for i := 0; root == ""; i++ {
		token := apitest.AddUser(t, users, fmt.Sprintf("root%d", i), "admin")
		if u, _ := users.ByName(fmt.Sprintf("root%d", i)); ring.Owner(u.ID).Name == "n1" {
			root = token
		}
	}
	start := time.Now()
	code, m, _ := ts.Do("GET", "/v1/approvals", root, nil, "")
	if code != http.StatusOK || fmt.Sprint(m["unanswered_nodes"]) != "[n2]" || !strings.Contains(fmt.Sprint(m["note"]), "did not answer") {
		t.Errorf("the list with a hung node: %d %v", code, m)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the list took %v", took)
	}
}

// hungNode is the address of a node that accepts connections and never
// answers, as a node stopped with SIGSTOP does.
func hungNode(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return l.Addr().String()
}
