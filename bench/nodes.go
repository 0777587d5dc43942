package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"datadesk/api"
	"datadesk/cluster"
	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// NodesResult is tool calls through HAProxy to a number of nodes.
type NodesResult struct {
	Nodes      int           `json:"nodes"`
	Owners     int           `json:"owners"`
	Callers    int           `json:"callers"`
	Calls      int           `json:"calls"`
	P50        time.Duration `json:"p50_ns"`
	P99        time.Duration `json:"p99_ns"`
	Throughput float64       `json:"calls_per_second"`
}

// Owners and callers of the through-the-proxy measure: enough owners that
// both nodes hold several, and callers that keep both busy.
const (
	nodeOwners  = 8
	nodeCallers = 16
)

// nodePaths measures files.query_table calls through HAProxy to one node
// and to two, each owner calling on their own table; without haproxy the
// measure is left out and the report says so.
func (r *runner) nodePaths() error {
	if _, err := cluster.HAProxyBinary(); err != nil {
		r.report.Memory = append(r.report.Memory, "tool calls through HAProxy not measured: "+err.Error())
		return nil
	}
	data, err := os.ReadFile(r.path("tenth.csv"))
	if err != nil {
		return err
	}
	for _, n := range []int{1, 2} {
		res, err := r.throughNodes(n, data)
		if err != nil {
			return fmt.Errorf("tool calls through %d nodes: %w", n, err)
		}
		r.report.Nodes = append(r.report.Nodes, res)
		r.bar.Add(1)
	}
	return nil
}

// benchNode is one node of the measure, served on loopback.
type benchNode struct {
	hs     *http.Server
	eng    *engine.Engine
	closes []func() error
}

func (n *benchNode) close() {
	if n.hs != nil {
		n.hs.Close()
	}
	for i := len(n.closes) - 1; i >= 0; i-- {
		_ = n.closes[i]()
	}
}

// startNode opens a node's databases under ecfg.Dir and serves it on addr.
func startNode(ctx context.Context, ecfg engine.Config, users *rbac.Users, policy *rbac.Policy, in *ingest.Ingester, cc api.ClusterConfig, addr string) (*benchNode, error) {
	n := &benchNode{}
	dir := ecfg.Dir
	eng, err := engine.New(ecfg)
	if err != nil {
		return n, err
	}
	n.eng = eng
	n.closes = append(n.closes, eng.Close)
	system, err := serverdb.Open(ctx, eng.Dir())
	if err != nil {
		return n, err
	}
	n.closes = append(n.closes, system.Close)
	audit, err := rbac.OpenAudit(dir)
	if err != nil {
		return n, err
	}
	n.closes = append(n.closes, audit.Close)
	srv, err := api.New(api.Config{SigningKey: bytes.Repeat([]byte("b"), 32), DataDir: dir, Cluster: cc, Logger: ecfg.Logger},
		api.Deps{Engine: eng, System: system, Ingest: in, Users: users, Policy: policy, Audit: audit})
	if err != nil {
		return n, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return n, err
	}
	n.hs = srv.HTTPServer(addr)
	go n.hs.Serve(ln)
	return n, nil
}

// throughNodes starts n nodes and HAProxy, uploads a table for each owner
// through the proxy, and times the owners' calls through it.
func (r *runner) throughNodes(count int, data []byte) (NodesResult, error) {
	dir := filepath.Join(r.dir, fmt.Sprintf("nodes%d", count))
	shared := filepath.Join(dir, "shared")
	users, err := rbac.OpenUsers(shared)
	if err != nil {
		return NodesResult{}, err
	}
	policy, err := rbac.NewPolicy(rbac.DefaultPolicy)
	if err != nil {
		return NodesResult{}, err
	}
	var list []string
	for i := range count {
		addr, err := cluster.FreeAddr()
		if err != nil {
			return NodesResult{}, err
		}
		list = append(list, fmt.Sprintf("n%d=%s", i+1, addr))
	}
	ring, err := cluster.ParseNodes(strings.Join(list, ","))
	if err != nil {
		return NodesResult{}, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	for _, node := range ring.Nodes() {
		cc := api.ClusterConfig{Ring: ring, Self: node.Name, Key: key}
		bn, err := startNode(r.ctx, engine.Config{Dir: filepath.Join(dir, node.Name), MemoryLimit: "512MB"}, users, policy, r.in, cc, node.Addr)
		defer bn.close()
		if err != nil {
			return NodesResult{}, err
		}
	}
	bind, err := cluster.FreeAddr()
	if err != nil {
		return NodesResult{}, err
	}
	proxy, err := cluster.StartHAProxy(ring, bind, dir)
	if err != nil {
		return NodesResult{}, err
	}
	defer proxy.Stop()
	base := "http://" + proxy.Addr
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * nodeCallers}}
	type owner struct{ token, body string }
	var owners []owner
	for i := range nodeOwners {
		_, token, err := users.Add(fmt.Sprintf("owner%d", i), "analyst")
		if err != nil {
			return NodesResult{}, err
		}
		fileID, err := uploadThrough(client, base, token, data)
		if err != nil {
			return NodesResult{}, err
		}
		owners = append(owners, owner{token, `{"arguments": {"file_id": "` + fileID +
			`", "group_by": ["region"], "aggregates": [{"op": "count"}, {"op": "sum", "column": "amount"}]}}`})
	}
	lat, elapsed, err := callsAtOnce(nodeCallers, max(r.cfg.HTTPCalls/nodeCallers, 1), func(c int) error {
		o := owners[c%len(owners)]
		return callThrough(client, base, o.token, o.body)
	})
	if err != nil {
		return NodesResult{}, err
	}
	return NodesResult{Nodes: count, Owners: len(owners), Callers: nodeCallers, Calls: len(lat), P50: lat[len(lat)/2],
		P99: lat[min(len(lat)*99/100, len(lat)-1)], Throughput: float64(len(lat)) / elapsed.Seconds()}, nil
}

// uploadThrough uploads a CSV as the token's owner and returns the file id.
func uploadThrough(client *http.Client, base, token string, data []byte) (string, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, _ := mw.CreateFormFile("file", "tenth.csv")
	w.Write(data)
	mw.Close()
	return postFile(client, base, token, &b, mw.FormDataContentType())
}

func callThrough(client *http.Client, base, token, body string) error {
	req, _ := http.NewRequest("POST", base+"/v1/tools/files.query_table", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
