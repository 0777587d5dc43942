// Package clickhousetest starts a local ClickHouse cluster for tests: two
// shard processes on free loopback ports, each with its own configuration
// and data directory under one temp directory, and a cluster over them in
// every server's remote_servers.
package clickhousetest

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Cluster is a running local cluster.
type Cluster struct {
	// Nodes are the HTTP URLs of the shards.
	Nodes []string
	// Name is the cluster's name in remote_servers; Database a database
	// name for tables.
	Name     string
	Database string
	// Replicas is how many replicas each shard has.
	Replicas int

	zk     *exec.Cmd
	args   [][]string // each server's command line, to restart it
	procs  []*exec.Cmd
	exited []chan struct{} // closed when the matching process has exited
	dir    string
}

// ErrNoServer is returned by Start when no ClickHouse server is installed.
var ErrNoServer = fmt.Errorf("clickhouse-server is not installed (make deps installs Debian's package)")

// serverCommand returns the command that runs a server with a config
// file: Debian's clickhouse-server, or the single clickhouse binary.
func serverCommand() ([]string, bool) {
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

// config is a server's whole configuration: its ports and directories, a
// default user reachable from loopback only, and the cluster of every
// shard. A query runs on one thread: the tests' tables are a few thousand
// rows, and two threads cost the 500 queries of the engine's equivalence
// test a fifth more CPU time for nothing.
func config(dir string, httpPort, tcpPort, interPort int, shardPorts [][]int, zkPort int, shard, replica int) string {
	var shards strings.Builder
	for _, replicas := range shardPorts {
		shards.WriteString("<shard>")
		if len(replicas) > 1 {
			shards.WriteString("<internal_replication>true</internal_replication>")
		}
		for _, p := range replicas {
			fmt.Fprintf(&shards, "<replica><host>127.0.0.1</host><port>%d</port></replica>", p)
		}
		shards.WriteString("</shard>")
	}
	zk := ""
	if zkPort > 0 {
		// Replicas fetch parts from each other over the interserver port.
		zk = fmt.Sprintf(`<zookeeper><node><host>127.0.0.1</host><port>%d</port></node><session_timeout_ms>6000</session_timeout_ms></zookeeper>
  <macros><shard>%02d</shard><replica>r%d</replica></macros>
  <interserver_http_port>%d</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>`, zkPort, shard, replica, interPort)
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
  <profiles><default><max_memory_usage>1000000000</max_memory_usage><max_threads>1</max_threads><connect_timeout_with_failover_ms>200</connect_timeout_with_failover_ms></default></profiles>
  <quotas><default></default></quotas>
  <remote_servers><%[5]s>%[4]s</%[5]s></remote_servers>
  %[6]s
</yandex>
`, dir, httpPort, tcpPort, shards.String(), clusterName, zk)
}

const clusterName = "datadesk"

// startTries is how many times Start picks new ports when a shard could
// not bind the ones it was given (another process took them first).
const startTries = 3

// errPortTaken says a shard exited before it answered: its ports were
// taken between being picked and being bound.
var errPortTaken = fmt.Errorf("a shard exited before it answered")

// Start starts a cluster of the given number of shards and waits until
// every one answers. Errors: ErrNoServer when no server is installed.
func Start(shards int) (*Cluster, error) {
	return StartReplicated(shards, 1)
}

// StartReplicated starts a cluster of shards with replicas each, and,
// for more than one replica, a ZooKeeper server they replicate through.
// Nodes lists shard 1's replicas, then shard 2's. Errors: ErrNoServer when
// no ClickHouse server is installed, ErrNoZooKeeper when replicas need
// ZooKeeper and it is not installed.
func StartReplicated(shards, replicas int) (*Cluster, error) {
	cmd, ok := serverCommand()
	if !ok {
		return nil, ErrNoServer
	}
	var err error
	for range startTries {
		var c *Cluster
		if c, err = start(cmd, shards, replicas); err == nil {
			return c, nil
		}
		if err != errPortTaken {
			return nil, err
		}
	}
	return nil, err
}

// start makes one attempt at StartReplicated on fresh ports.
func start(cmd []string, shards, replicas int) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "datadesk-clickhouse-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: clusterName, Database: "datadesk", Replicas: replicas, dir: dir}
	zkPort := 0
	if replicas > 1 {
		if zkPort, err = c.startZooKeeper(); err != nil {
			c.Stop()
			return nil, err
		}
	}
	n := shards * replicas
	httpPorts, tcpPorts, interPorts := make([]int, n), make([]int, n), make([]int, n)
	byShard := make([][]int, shards)
	for i := range n {
		h, err1 := freePort()
		tp, err2 := freePort()
		ip, err3 := freePort()
		if err1 != nil || err2 != nil || err3 != nil {
			c.Stop()
			return nil, fmt.Errorf("free port: %v %v %v", err1, err2, err3)
		}
		httpPorts[i], tcpPorts[i], interPorts[i] = h, tp, ip
		byShard[i/replicas] = append(byShard[i/replicas], tp)
	}
	for i := range n {
		sdir := filepath.Join(dir, fmt.Sprintf("node%d", i+1))
		conf := filepath.Join(sdir, "config.xml")
		if err := os.MkdirAll(sdir, 0o700); err != nil {
			c.Stop()
			return nil, err
		}
		if err := os.WriteFile(conf, []byte(config(sdir, httpPorts[i], tcpPorts[i], interPorts[i], byShard, zkPort, i/replicas+1, i%replicas+1)), 0o600); err != nil {
			c.Stop()
			return nil, err
		}
		c.args = append(c.args, append(append([]string(nil), cmd...), "--config-file="+conf))
		c.procs, c.exited = append(c.procs, nil), append(c.exited, nil)
		if err := c.run(i); err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, fmt.Sprintf("http://127.0.0.1:%d", httpPorts[i]))
	}
	deadline := time.Now().Add(60 * time.Second)
	for i, n := range c.Nodes {
		for {
			// A shard that exited lost its ports to another process, and
			// whatever answers on them is not this cluster.
			select {
			case <-c.exited[i]:
				c.Stop()
				return nil, errPortTaken
			default:
			}
			resp, err := http.Get(n + "/ping")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("shard%d", i+1), "error.log"))
				c.Stop()
				return nil, fmt.Errorf("clickhouse at %s did not start: %v\n%s", n, err, log)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// A shard that lost its ports may answer another server's ping before
	// it gives up: a moment later, every shard must still be running.
	time.Sleep(300 * time.Millisecond)
	for i := range c.exited {
		select {
		case <-c.exited[i]:
			c.Stop()
			return nil, errPortTaken
		default:
		}
	}
	return c, nil
}

// run starts server i (from 0) with its command line.
func (c *Cluster) run(i int) error {
	p := exec.Command(c.args[i][0], c.args[i][1:]...)
	p.Dir = filepath.Dir(strings.TrimPrefix(c.args[i][len(c.args[i])-1], "--config-file="))
	if err := p.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = p.Wait(); close(exited) }()
	c.procs[i], c.exited[i] = p, exited
	return nil
}

// Restart starts server i (from 0) again after Kill, with its data as the
// crash left it, and waits until it answers.
func (c *Cluster) Restart(i int) error {
	if err := c.run(i); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-c.exited[i]:
			return fmt.Errorf("clickhouse at %s exited on restart", c.Nodes[i])
		default:
		}
		if resp, err := http.Get(c.Nodes[i] + "/ping"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("clickhouse at %s did not answer within a minute of its restart", c.Nodes[i])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill kills shard i (from 0) at once, as a crash would, and waits for
// it to exit.
func (c *Cluster) Kill(i int) {
	_ = c.procs[i].Process.Kill()
	<-c.exited[i]
}

// KillZooKeeper kills the cluster's ZooKeeper at once, as a crash would,
// and waits for it to exit; Stop does nothing more for it.
func (c *Cluster) KillZooKeeper() {
	if c.zk != nil {
		_ = c.zk.Process.Kill()
		_ = c.zk.Wait()
		c.zk = nil
	}
}

// Stop stops the shards and removes their data.
func (c *Cluster) Stop() {
	for i, p := range c.procs {
		if p != nil {
			_ = p.Process.Kill()
			<-c.exited[i]
		}
	}
	c.procs, c.exited = nil, nil
	if c.zk != nil {
		_ = c.zk.Process.Kill()
		_ = c.zk.Wait()
		c.zk = nil
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// ErrNoZooKeeper is returned by StartReplicated when replicas need
// ZooKeeper and Debian's package is not installed.
var ErrNoZooKeeper = fmt.Errorf("zookeeper is not installed (make deps installs Debian's package)")

// zooKeeperJar is Debian's ZooKeeper, whose manifest names its libraries.
const zooKeeperJar = "/usr/share/java/zookeeper.jar"

// startZooKeeper runs a standalone ZooKeeper on a free port and waits
// until it accepts connections.
func (c *Cluster) startZooKeeper() (int, error) {
	if _, err := os.Stat(zooKeeperJar); err != nil {
		return 0, ErrNoZooKeeper
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return 0, ErrNoZooKeeper
	}
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	zdir := filepath.Join(c.dir, "zookeeper")
	if err := os.MkdirAll(zdir, 0o700); err != nil {
		return 0, err
	}
	log, err := os.Create(filepath.Join(zdir, "zookeeper.log"))
	if err != nil {
		return 0, err
	}
	defer log.Close()
	// A small server for a few tables: the serial collector and the first
	// compiler only, which start it on a fraction of the CPU time.
	c.zk = exec.Command(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", zooKeeperJar, "org.apache.zookeeper.server.ZooKeeperServerMain",
		fmt.Sprint(port), filepath.Join(zdir, "data"))
	c.zk.Stdout, c.zk.Stderr = log, log
	if err := c.zk.Start(); err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if serving(port) {
			return port, nil
		}
	}
	return 0, fmt.Errorf("zookeeper did not serve on %d within a minute", port)
}

// serving says whether the ZooKeeper on port serves sessions: it accepts
// connections before, and a ClickHouse started then fails its first
// session, which ClickHouse 18.16's distributed DDL does not recover from
// at once. ZooKeeper's srvr command (allowed by default) says its mode
// once it serves.
func serving(port int) bool {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return false
	}
	out, _ := io.ReadAll(conn)
	return strings.Contains(string(out), "Mode: ")
}

// ErrNoChDB is returned by StartChDB when Node or npm's chdb is missing.
var ErrNoChDB = fmt.Errorf("node or npm's chdb is not installed (make deps installs chdb into .node with npm)")

//go:embed chdb.cjs
var chdbServer []byte

// StartChDB starts a current ClickHouse of one shard for the tests: chDB
// (ClickHouse as a library, npm's chdb in nodeModules/node_modules) in a
// Node process that speaks the part of ClickHouse's HTTP interface the
// cluster client uses. Errors: ErrNoChDB.
func StartChDB(nodeModules string) (*Cluster, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, ErrNoChDB
	}
	lib := filepath.Join(nodeModules, "node_modules")
	if _, err := os.Stat(filepath.Join(lib, "chdb", "package.json")); err != nil {
		return nil, ErrNoChDB
	}
	dir, err := os.MkdirTemp("", "datadesk-chdb-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: clusterName, Database: "datadesk", Replicas: 1, dir: dir}
	script := filepath.Join(dir, "chdb.cjs")
	if err := os.WriteFile(script, chdbServer, 0o600); err != nil {
		c.Stop()
		return nil, err
	}
	p := exec.Command(node, script, filepath.Join(dir, "server"))
	p.Env = append(os.Environ(), "NODE_PATH="+lib)
	out, err := p.StdoutPipe()
	if err != nil {
		c.Stop()
		return nil, err
	}
	var stderr strings.Builder
	p.Stderr = &stderr
	if err := p.Start(); err != nil {
		c.Stop()
		return nil, err
	}
	exited := make(chan struct{})
	port := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		port <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { _ = p.Wait(); close(exited) }()
	c.procs, c.exited = []*exec.Cmd{p}, []chan struct{}{exited}
	select {
	case n := <-port:
		if n == "" {
			<-exited
			c.Stop()
			return nil, fmt.Errorf("chdb did not start: %s", stderr.String())
		}
		c.Nodes = []string{"http://127.0.0.1:" + n}
		return c, nil
	case <-time.After(60 * time.Second):
		c.Stop()
		return nil, fmt.Errorf("chdb did not listen within a minute: %s", stderr.String())
	}
}
