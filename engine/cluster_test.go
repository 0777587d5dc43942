package engine

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A local ClickHouse cluster of two shard processes on loopback ports,
// started once per test run by the first test that needs it and stopped by
// TestMain.
var testCluster struct {
	once  sync.Once
	procs []*exec.Cmd
	dir   string
	cfg   ClickHouseConfig
	err   error
	skip  string
}

// clickHouseServer returns the command that runs a server with a config
// file: Debian's clickhouse-server, or the single clickhouse binary.
func clickHouseServer() ([]string, bool) {
	for _, p := range []string{"clickhouse-server", "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"} {
		if path, err := exec.LookPath(p); err == nil {
			return []string{path}, true
		}
	}
	if path, err := exec.LookPath("clickhouse"); err == nil {
		return []string{path, "server"}, true
	}
	return nil, false
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// clusterConfig is a server's whole configuration: its ports and
// directories, a default user reachable from loopback only, and the
// cluster of every shard.
func clusterConfig(dir string, httpPort, tcpPort int, shardPorts []int) string {
	var shards strings.Builder
	for _, p := range shardPorts {
		fmt.Fprintf(&shards, "<shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>", p)
	}
	return fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/error.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>%[2]d</http_port>
  <tcp_port>%[3]d</tcp_port>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/schemas/</format_schema_path>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <profiles><default><max_memory_usage>1000000000</max_memory_usage><max_threads>2</max_threads></default></profiles>
  <quotas><default></default></quotas>
  <remote_servers><datadesk>%[4]s</datadesk></remote_servers>
</yandex>
`, dir, httpPort, tcpPort, shards.String())
}

func startTestCluster() {
	c := &testCluster
	cmd, ok := clickHouseServer()
	if !ok {
		c.skip = "clickhouse-server is not installed (make deps installs it)"
		return
	}
	c.dir, c.err = os.MkdirTemp("", "datadesk-clickhouse-")
	if c.err != nil {
		return
	}
	const shards = 2
	var httpPorts, tcpPorts []int
	for range shards {
		h, err1 := freePort()
		tp, err2 := freePort()
		if err1 != nil || err2 != nil {
			c.err = fmt.Errorf("free port: %v %v", err1, err2)
			return
		}
		httpPorts, tcpPorts = append(httpPorts, h), append(tcpPorts, tp)
	}
	c.cfg = ClickHouseConfig{Cluster: "datadesk", Database: "datadesk"}
	for i := range shards {
		dir := filepath.Join(c.dir, fmt.Sprintf("shard%d", i+1))
		if c.err = os.MkdirAll(dir, 0o700); c.err != nil {
			return
		}
		conf := filepath.Join(dir, "config.xml")
		if c.err = os.WriteFile(conf, []byte(clusterConfig(dir, httpPorts[i], tcpPorts[i], tcpPorts)), 0o600); c.err != nil {
			return
		}
		p := exec.Command(cmd[0], append(cmd[1:], "--config-file="+conf)...)
		p.Dir = dir
		if c.err = p.Start(); c.err != nil {
			return
		}
		c.procs = append(c.procs, p)
		c.cfg.Nodes = append(c.cfg.Nodes, fmt.Sprintf("http://127.0.0.1:%d", httpPorts[i]))
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, n := range c.cfg.Nodes {
		for {
			resp, err := http.Get(n + "/ping")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(c.dir, "shard1", "error.log"))
				c.err = fmt.Errorf("clickhouse at %s did not start: %v\n%s", n, err, log)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// stopTestCluster stops the shards and removes their data.
func stopTestCluster() {
	c := &testCluster
	for _, p := range c.procs {
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// testClickHouse returns a client of the local cluster, starting it on
// first use; the test is skipped only when no server binary is installed.
func testClickHouse(t testing.TB) *ClickHouse {
	t.Helper()
	testCluster.once.Do(startTestCluster)
	if testCluster.skip != "" {
		t.Skip(testCluster.skip)
	}
	if testCluster.err != nil {
		t.Fatal(testCluster.err)
	}
	ch, err := NewClickHouse(testCluster.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ch
}

// newClusterEngine is newEngine with the cluster as its remote backend.
func newClusterEngine(t *testing.T, ch *ClickHouse, minRows int64) *Engine {
	t.Helper()
	e, err := New(Config{Dir: t.TempDir(), MemoryLimit: "256MB", MaxTempSize: "1GB", Remote: ch, RemoteMinRows: minRows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
