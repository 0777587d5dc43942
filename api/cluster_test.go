package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/xuri/excelize/v2"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/engine/clickhouse"
	"datadesk/engine/clickhousetest"
	"datadesk/ingest"
	"datadesk/internal/testenv"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// The local two-shard ClickHouse cluster, started by the first test that
// needs it and stopped by TestMain.
var testCluster struct {
	once sync.Once
	c    *clickhousetest.Cluster
	err  error
}

func stopTestCluster() {
	if testCluster.c != nil {
		testCluster.c.Stop()
	}
}

func testClickHouse(t *testing.T) *clickhouse.Cluster {
	t.Helper()
	testCluster.once.Do(func() { testCluster.c, testCluster.err = clickhousetest.Start(2) })
	if errors.Is(testCluster.err, clickhousetest.ErrNoServer) {
		testenv.Missing(t, "%v", testCluster.err)
	}
	if testCluster.err != nil {
		t.Fatal(testCluster.err)
	}
	c := testCluster.c
	ch, err := clickhouse.New(clickhouse.Config{Nodes: c.Nodes, Cluster: c.Name, Database: c.Database})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestClusterTableThroughHTTP uploads one CSV twice, moves one copy's table
// to the ClickHouse cluster, and checks that query_table calls, pages and
// exports answer the same for both through the HTTP interface, and that
// deleting the file removes the table from the cluster.
func TestClusterTableThroughHTTP(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	ctx := context.Background()
	dir := t.TempDir()
	eng, err := engine.New(engine.Config{Dir: dir, MemoryLimit: "256MB", MaxTempSize: "1GB", Remote: ch})
	if err != nil {
		t.Fatal(err)
	}
	users, _ := rbac.OpenUsers(dir)
	policy, _ := rbac.NewPolicy(rbac.DefaultPolicy)
	system, err := serverdb.Open(ctx, eng.Dir())
	if err != nil {
		t.Fatal(err)
	}
	audit, _ := rbac.OpenAudit(dir)
	srv, err := api.New(api.Config{SigningKey: bytes.Repeat([]byte("k"), 32), DataDir: dir}, api.Deps{Engine: eng, System: system,
		Ingest: ingest.New(ingest.Config{}), Users: users, Policy: policy, Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); eng.Close(); system.Close(); audit.Close() })
	ts := &apitest.Server{T: t, URL: hs.URL, Dir: dir, Server: srv, Users: users}
	user, token, err := users.Add("ana", "analyst")
	if err != nil {
		t.Fatal(err)
	}

	var csv strings.Builder
	csv.WriteString("code,Region,amount,day,note\n")
	regions := []string{"North", "north", "SOUTH", "", "East"}
	for i := range 400 {
		amount, day := fmt.Sprintf("%d.%02d", i*7%900-100, i%100), fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28)
		if i%11 == 0 {
			amount, day = "", ""
		}
		fmt.Fprintf(&csv, "%06d,%s,%s,%s,\"note, %d\"\n", i*37%1000, regions[i%5], amount, day, i%9)
	}
	tableOf := func() (string, string) {
		code, m := ts.Upload(token, "sales.csv", []byte(csv.String()))
		if code != 201 {
			t.Fatalf("upload: %d %v", code, m)
		}
		tables := m["tables"].([]any)
		return m["file"].(map[string]any)["id"].(string), tables[0].(map[string]any)["id"].(string)
	}
	localFile, localTable := tableOf()
	remoteFile, remoteTable := tableOf()
	store, release, err := eng.Acquire(ctx, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.MoveTable(ctx, remoteTable, catalog.LocationClickHouse)
	release()
	if err != nil {
		t.Fatal(err)
	}
	if _, m, _ := ts.Do("GET", "/v1/tables/"+remoteTable, token, nil, ""); !strings.Contains(fmt.Sprint(m), "location:clickhouse") {
		t.Errorf("table descriptor does not say clickhouse: %v", m)
	}

	for _, args := range []string{
		`{"limit":20,"offset":3}`,
		`{"filters":[{"column":"region","op":"eq","value":"NORTH"}],"aggregates":[{"op":"sum","column":"amount"},{"op":"avg","column":"amount"}],"limit":5,"sort_by":"amount","direction":"desc"}`,
		`{"group_by":["region"],"aggregates":[{"op":"count"},{"op":"max","column":"amount"}],"sort_by":"max_amount"}`,
		`{"filters":[{"column":"code","op":"eq","value":37},{"column":"day","op":"is_null","value":false}],"limit":3}`,
		`{"filters":[{"column":"note","op":"contains","value":"E, 4"}],"columns":["code","day"],"limit":7,"sort_by":"day"}`,
		`{"filters":[{"column":"amount","op":"gt","value":"many"}]}`,
		`{"filters":[{"column":"region","op":"in","value":["No rth","west"]}]}`,
		`{"filters":[{"column":"code","op":"eq","value":99999}]}`,
		`{"group_by":["nope"]}`,
	} {
		answer := func(fileID string) (int, map[string]any) {
			var a map[string]any
			_ = json.Unmarshal([]byte(args), &a)
			a["file_id"] = fileID
			body, _ := json.Marshal(map[string]any{"arguments": a})
			code, m, _ := ts.Do("POST", "/v1/tools/files.query_table", token, bytes.NewReader(body), "application/json")
			if r, ok := m["result"].(map[string]any); ok {
				for _, k := range []string{"file_id", "table_id", "sql"} {
					delete(r, k)
				}
			}
			if e, ok := m["error"].(map[string]any); ok {
				delete(e, "request_id")
			}
			return code, m
		}
		c1, want := answer(localFile)
		c2, got := answer(remoteFile)
		if c1 != c2 || fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("query_table %s:\nduckdb     %d %v\nclickhouse %d %v", args, c1, want, c2, got)
		}
		if strings.Contains(args, `"eq","value":37}`) || strings.Contains(args, "No rth") || strings.Contains(args, "99999") {
			if r, _ := want["result"].(map[string]any); r == nil || r["hint"] == nil {
				t.Errorf("query_table %s: no hint in %v", args, want)
			}
		}
	}
	for _, path := range []string{"/rows?offset=390&limit=20", "/rows?limit=15&offset=100&sort=amount&direction=desc", "/rows?limit=9&sort=day",
		"/export?format=csv", "/export?format=json", "/rows?sort=nope"} {
		c1, _, want := ts.Do("GET", "/v1/tables/"+localTable+path, token, nil, "")
		c2, _, got := ts.Do("GET", "/v1/tables/"+remoteTable+path, token, nil, "")
		want = bytes.ReplaceAll(want, []byte(localTable), []byte("T"))
		got = bytes.ReplaceAll(got, []byte(remoteTable), []byte("T"))
		if c1 != c2 || !bytes.Equal(want, got) {
			t.Errorf("%s:\nduckdb     %d %.400s\nclickhouse %d %.400s", path, c1, want, c2, got)
		}
	}

	// The web page: a search, a summary of a column, and the export of a
	// filtered, searched and sorted view, streamed.
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	client, _, _ := ts.SignIn("ana", "correct horse battery")
	get := func(path string) (int, []byte) {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	for _, path := range []string{"?q=nor&sort=amount&dir=desc", "?q=TE%2C+4&summary=amount", "?summary=region", "?o.amount=gte&f.amount=10&summary=day",
		"/export?format=csv&q=nor&o.amount=gte&f.amount=10&sort=day&dir=desc", "/export?format=csv&q=e%2C+1", "/export?format=xlsx&q=south&sort=code",
		"/export?format=csv&o.code=in&f.code=000037,000074,000111", "?q=" + strings.Repeat("x", 201)} {
		c1, want := get("/tables/" + localTable + path)
		c2, got := get("/tables/" + remoteTable + path)
		want = bytes.ReplaceAll(want, []byte(localTable), []byte("T"))
		got = bytes.ReplaceAll(got, []byte(remoteTable), []byte("T"))
		if strings.Contains(path, "xlsx") {
			want, got = xlsxRows(t, want), xlsxRows(t, got)
		}
		if c1 != c2 || !bytes.Equal(want, got) {
			t.Errorf("page %s:\nduckdb     %d %.600s\nclickhouse %d %.600s", path, c1, want, c2, got)
		}
	}

	if code, _, _ := ts.Do("DELETE", "/v1/files/"+remoteFile, token, nil, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if n, err := clusterCount(ctx, ch, remoteTable); err == nil {
		t.Errorf("the cluster still holds %d rows of the deleted file's table", n)
	}
}

// xlsxRows is the cells of an XLSX answer's first sheet, one row a line.
func xlsxRows(t *testing.T, body []byte) []byte {
	x, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		return body
	}
	defer x.Close()
	rows, err := x.GetRows(x.GetSheetList()[0])
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, r := range rows {
		fmt.Fprintln(&b, strings.Join(r, "\t"))
	}
	return b.Bytes()
}

func clusterCount(ctx context.Context, ch *clickhouse.Cluster, tableID string) (int64, error) {
	return ch.Count(ctx, &catalog.Table{ID: tableID})
}
