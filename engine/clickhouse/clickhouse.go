package clickhouse

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
)

// Config says where a ClickHouse cluster is and how to reach it.
type Config struct {
	// Nodes are the base URLs of the HTTP interface of every shard, such
	// as http://10.0.0.5:8123. Each holds a local part of every table; the
	// first reachable one answers queries through the Distributed table.
	Nodes []string
	// Cluster is the cluster's name in the servers' remote_servers.
	Cluster string
	// Database holds the tables; it is created when missing.
	Database string
	// Replicas is how many replicas each shard has: more than one makes
	// every table a ReplicatedMergeTree (the servers need ZooKeeper, the
	// macros shard and replica, and distributed_ddl), changes of tables go
	// through ZooKeeper's DDL queue, and inserts wait until WriteQuorum
	// replicas of a shard have the rows.
	Replicas int
	// WriteQuorum is how many replicas of a shard an insert waits for
	// (insert_quorum); 0 means a majority: both of two, two of three.
	// Below every replica, reads ask for sequential consistency, so that a
	// replica still catching up refuses to answer rather than count short.
	WriteQuorum int
	// User and Password authenticate every request (HTTP basic auth).
	User     string
	Password string
	// Client is the HTTP client; nil means one without a global timeout
	// (each request is bounded by its context).
	Client *http.Client
}

// Cluster keeps big tables on a ClickHouse cluster: each table is a
// MergeTree table on every shard and a Distributed table over them,
// sharded by a hash of the row number. It talks to the servers over their
// HTTP interface. ClickHouse 18.16 has no bound parameters over HTTP, so
// every statement is compiled from a checked plan with identifiers quoted
// and values written as escaped literals (chLiteral).
type Cluster struct {
	cfg Config
	// failures counts the statements that failed, every node that could
	// run them tried; failovers the statements a node failed that the
	// next node then ran: for metrics.
	failures, failovers atomic.Int64
	version             serverVersion
}

// Failures is how many statements have failed since the start, after
// every node that could run them was tried: the cluster unreachable, a
// shard down, or an error of ClickHouse's. A replica down whose
// statements the other replicas ran counts none.
func (c *Cluster) Failures() int64 { return c.failures.Load() }

// Failovers is how many times since the start a node failed a statement
// (it was down, lost a shard, or had not caught up) and the next node
// was asked instead: with replicas, a replica down shows here.
func (c *Cluster) Failovers() int64 { return c.failovers.Load() }

// New returns a client of the cluster cfg describes. It does not
// connect; Ping does.
func New(cfg Config) (*Cluster, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("clickhouse: no nodes")
	}
	if cfg.Cluster == "" || cfg.Database == "" {
		return nil, fmt.Errorf("clickhouse: cluster and database are required")
	}
	for _, n := range cfg.Nodes {
		if u, err := url.Parse(n); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("clickhouse: node %q is not an http(s) URL", n)
		}
	}
	if cfg.Replicas > 1 && (cfg.WriteQuorum == 1 || cfg.WriteQuorum > cfg.Replicas) || cfg.WriteQuorum < 0 {
		// One replica's write would leave the others' counts short
		// with nothing to tell a read so.
		return nil, fmt.Errorf("clickhouse: a write quorum of %d with %d replicas; allowed: 0 (a majority) or 2 to %d", cfg.WriteQuorum, cfg.Replicas, max(cfg.Replicas, 2))
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &Cluster{cfg: cfg}, nil
}

// Name reports where tables of this backend live, as the catalog says.
func (c *Cluster) Name() string { return catalog.LocationClickHouse }

// Ping checks that every node answers, and reads the servers' version
// and the cluster's layout (DetectVersion).
func (c *Cluster) Ping(ctx context.Context) error {
	for _, n := range c.cfg.Nodes {
		if err := c.execOn(ctx, n, "SELECT 1"); err != nil {
			return err
		}
	}
	_, err := c.DetectVersion(ctx)
	return err
}

// chQueryTimeout bounds one statement on the server side too, so a
// cancelled request does not leave a query running there.
const chQueryTimeout = 300 * time.Second

func (c *Cluster) request(ctx context.Context, node, query string, body io.Reader, settings url.Values) (*http.Response, error) {
	v := url.Values{}
	for k, vs := range settings {
		v[k] = vs
	}
	v.Set("max_execution_time", fmt.Sprint(int(chQueryTimeout.Seconds())))
	// Filter values are literals in the statement: a long one must not
	// pass ClickHouse's parser limit (256 KiB by default).
	v.Set("max_query_size", fmt.Sprint(chMaxQuerySize))
	if dl, ok := ctx.Deadline(); ok {
		if s := int(time.Until(dl).Seconds()) + 1; s < int(chQueryTimeout.Seconds()) {
			v.Set("max_execution_time", fmt.Sprint(s))
		}
	}
	if body == nil {
		body = strings.NewReader(query)
	} else {
		v.Set("query", query)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(node, "/")+"/?"+v.Encode(), body)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	if c.cfg.User != "" {
		req.SetBasicAuth(c.cfg.User, c.cfg.Password)
	}
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, c.classify(ctx, fmt.Errorf("clickhouse: %s: status %d: %s", node, resp.StatusCode, strings.TrimSpace(string(msg))))
	}
	return resp, nil
}

// probeKey marks a readiness probe's context: its failures are the
// probe's answer, not failed calls, and are not counted.
type probeKey struct{}

// attemptKey marks the context of one attempt among several nodes: the
// loop that makes the attempts counts its failure, as a failover when
// the next node is asked, as a failed statement when none is left.
type attemptKey struct{}

// attempt is ctx for one attempt of a loop over nodes.
func attempt(ctx context.Context) context.Context { return context.WithValue(ctx, attemptKey{}, true) }

// failed counts a statement that failed for good, unless ctx is a
// probe's or one attempt's, whose loop counts it.
func (c *Cluster) failed(ctx context.Context) {
	if ctx.Value(probeKey{}) == nil && ctx.Value(attemptKey{}) == nil {
		c.failures.Add(1)
	}
}

// failover counts a statement a node failed that the next node is
// asked, unless a probe made it.
func (c *Cluster) failover(ctx context.Context) {
	if ctx.Value(probeKey{}) == nil {
		c.failovers.Add(1)
	}
}

// chMaxQuerySize bounds a statement's text on the cluster.
const chMaxQuerySize = 64 << 20

// classify maps a failed request to the error model, counting it (see
// failed): the context's end is a timeout; anything else is internal
// and its text stays in the logs.
func (c *Cluster) classify(ctx context.Context, err error) error {
	c.failed(ctx)
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return datadesk.Errorf(datadesk.Timeout, "the operation took longer than allowed").WithCause(err)
	}
	if what := c.down(err); what != "" {
		return datadesk.Errorf(datadesk.Unavailable, "the ClickHouse cluster cannot answer: %s; try again when it is back", what).WithCause(err)
	}
	return fmt.Errorf("clickhouse: %w", err)
}

// chDownText matches ClickHouse's errors for a server it could not reach
// or lost during a statement: NETWORK_ERROR, SOCKET_TIMEOUT,
// ALL_CONNECTION_TRIES_FAILED, and a connection that ended mid-packet.
var chDownText = regexp.MustCompile(`Code: (209|210|279)[,.]|while receiving packet from|Connection refused|Connection reset`)

// chZooKeeperText matches ClickHouse's errors when it cannot reach
// ZooKeeper: its coordination errors, and a replicated table gone
// read-only (Code 242) for the session it lost.
var chZooKeeperText = regexp.MustCompile(`ZooKeeper|Coordination::|Code: 242[,.]`)

// chAddress finds the address of the server an error names.
var chAddress = regexp.MustCompile(`(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):[0-9]{2,5}`)

// down says what is down when err means a server of the cluster could
// not be reached, else "": a shard by its number and its replicas'
// addresses when the cluster's layout is known (see DetectVersion).
func (c *Cluster) down(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		node := ue.URL[:strings.Index(ue.URL+"?", "?")]
		shard := c.shardOf(strings.TrimSuffix(node, "/")) + 1
		if c.cfg.Replicas > 1 {
			return fmt.Sprintf("node %s, a replica of shard %d, cannot be reached", node, shard)
		}
		return fmt.Sprintf("shard %d (%s) cannot be reached", shard, node)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return "a node ended its answer early"
	}
	msg := err.Error()
	if chZooKeeperText.MatchString(msg) {
		// Checked first: its "All connection tries failed" names
		// ZooKeeper's address, not a shard's.
		return "ClickHouse has lost ZooKeeper, without which replicated tables take no writes"
	}
	if strings.Contains(msg, "Code: 285,") {
		// TOO_FEW_LIVE_REPLICAS: fewer replicas answer than an insert
		// waits for.
		return "too many replicas of a shard are down for the write quorum"
	}
	if strings.Contains(msg, "Code: 289,") {
		// REPLICA_IS_NOT_IN_QUORUM: a replica still catching up refused
		// a read; another node answers it.
		return "a replica is still catching up with the last write"
	}
	if !chDownText.MatchString(msg) {
		return ""
	}
	// The first address is the node that answered; the others are the
	// replicas of the shard it could not reach, the last one at least.
	all := chAddress.FindAllString(msg, -1)
	if s := c.version.shardOf(all); s != "" {
		return s + " is down"
	}
	if len(all) > 0 {
		return "shard " + all[len(all)-1] + " is down"
	}
	return "a shard is down"
}

func (c *Cluster) execOn(ctx context.Context, node, stmt string) error {
	resp, err := c.request(ctx, node, stmt, nil, nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// execAll runs one statement on every node, for DDL: without ZooKeeper
// there is no ON CLUSTER, so each shard gets its own.
func (c *Cluster) execAll(ctx context.Context, stmt string) error {
	for _, n := range c.cfg.Nodes {
		if err := c.execOn(ctx, n, stmt); err != nil {
			return err
		}
	}
	return nil
}

// chResult streams a TabSeparatedWithNamesAndTypes answer.
type chResult struct {
	body  io.ReadCloser
	r     *bufio.Reader
	names []string
	types []string
}

// query runs a SELECT on the first node that answers and returns its rows.
// The statement must not end with a FORMAT clause. wait buffers the whole
// answer on the server, so that an error in the middle of a query is a
// status code and not text after the rows; streams (exports, moves) check
// their row counts instead.
func (c *Cluster) query(ctx context.Context, stmt string, wait bool) (*chResult, error) {
	return c.queryOn(ctx, c.cfg.Nodes, stmt, wait)
}

// queryOn is query on the first of nodes that answers.
func (c *Cluster) queryOn(ctx context.Context, nodes []string, stmt string, wait bool) (*chResult, error) {
	settings := c.readSettings(url.Values{})
	if wait {
		settings.Set("wait_end_of_query", "1")
	}
	var resp *http.Response
	var err error
	for i, n := range nodes {
		resp, err = c.request(attempt(ctx), n, stmt+" FORMAT TabSeparatedWithNamesAndTypes", nil, settings)
		if err == nil || ctx.Err() != nil || !isConnError(err) && !(c.cfg.Replicas > 1 && c.elsewhere(err)) || i == len(nodes)-1 {
			break
		}
		c.failover(ctx)
	}
	if err != nil {
		c.failed(ctx)
		return nil, err
	}
	res := &chResult{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}
	for _, dst := range []*[]string{&res.names, &res.types} {
		line, err := res.line()
		if err != nil {
			res.Close()
			return nil, c.classify(ctx, fmt.Errorf("reading the header: %w", err))
		}
		*dst = line
	}
	return res, nil
}

func isConnError(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// next returns the next row's fields, nil standing for NULL; io.EOF at the
// end.
func (r *chResult) next() ([]*string, error) {
	fields, err := r.line()
	if err != nil {
		return nil, err
	}
	if len(fields) != len(r.types) {
		return nil, fmt.Errorf("clickhouse: row of %d fields, want %d: %.200q", len(fields), len(r.types), strings.Join(fields, "\t"))
	}
	out := make([]*string, len(fields))
	for i, f := range fields {
		if f == `\N` {
			continue
		}
		s := tsvUnescape(f)
		out[i] = &s
	}
	return out, nil
}

func (r *chResult) line() ([]string, error) {
	s, err := r.r.ReadString('\n')
	if err == io.EOF && s != "" {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\t"), nil
}

// Close ends the answer.
func (r *chResult) Close() error { return r.body.Close() }

// tsvUnescape reads a field of ClickHouse's TabSeparated format.
func tsvUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case '0':
			b.WriteByte(0)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// chLiteral writes s as a ClickHouse string literal. Backslash and quote
// are escaped, and every control byte is written as \xHH, so no value can
// end the literal or the statement.
func chLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\':
			b.WriteString(`\\`)
		case ch == '\'':
			b.WriteString(`\'`)
		case ch < 0x20 || ch == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, ch)
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// chMaxFileName bounds a column's name on the cluster as ClickHouse
// writes it into file names: escaped (every byte but ASCII letters,
// digits and _ as %XX) and with suffixes such as .null.mrk2 added, it
// must stay within a file system's 255 bytes.
const chMaxFileName = 240

// chColumn is a column's name on the cluster: its key, or, when the key
// escaped would make too long a file name (a header of 40 CJK characters
// does), a name derived from its hash, the same every time.
func chColumn(key string) string {
	n := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			n++
		} else {
			n += 3
		}
	}
	if n <= chMaxFileName {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "c_" + hex.EncodeToString(sum[:16])
}

// chCol quotes a table column's name on the cluster.
func chCol(key string) string { return chIdent(chColumn(key)) }

// chIdent quotes a ClickHouse identifier with backquotes.
func chIdent(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "`", "\\`")
	return "`" + r.Replace(s) + "`"
}

// What stops working while a shard or ZooKeeper is lost: the node goes
// on serving every owner's DuckDB tables (and, without ZooKeeper, reads
// of the cluster's), so it is degraded, not unready.
const (
	degradesShard     = "tables on the ClickHouse cluster cannot be read or written; tables in DuckDB answer"
	degradesZooKeeper = "tables on the ClickHouse cluster take no writes (moves and uploads to it); reads go on"
)

// Probes ping each node of the cluster, or, with replicas, each shard:
// a shard answers while any of its replicas does, since reads go on
// with the others (a replica down is ClickHouse's to report; a node
// unready for it would take every datadesk node out of service at once).
func (c *Cluster) Probes() []catalog.Probe {
	var out []catalog.Probe
	if c.cfg.Replicas <= 1 {
		for i, p := range c.NodeProbes() {
			p.Name, p.Degrades = fmt.Sprintf("clickhouse node %d (%s)", i+1, p.Name), degradesShard
			out = append(out, p)
		}
		return out
	}
	for s := range c.shards() {
		replicas := c.cfg.Nodes[s*c.cfg.Replicas : min((s+1)*c.cfg.Replicas, len(c.cfg.Nodes))]
		out = append(out, catalog.Probe{Name: fmt.Sprintf("clickhouse shard %d (%s)", s+1, strings.Join(replicas, ", ")), Degrades: degradesShard, Run: func(ctx context.Context) error {
			errs := make(chan error, len(replicas))
			for _, n := range replicas {
				go func() { errs <- c.ping(ctx, n) }()
			}
			var all []error
			for range replicas {
				err := <-errs
				if err == nil {
					return nil
				}
				all = append(all, err)
			}
			return fmt.Errorf("no replica of the shard answers: %w", errors.Join(all...))
		}})
	}
	// Replicated tables take no insert while ClickHouse has lost
	// ZooKeeper: asked through the first node that answers.
	out = append(out, catalog.Probe{Name: "zookeeper (through clickhouse)", Degrades: degradesZooKeeper, Run: func(ctx context.Context) error {
		var last error
		for _, n := range c.cfg.Nodes {
			resp, err := c.request(context.WithValue(ctx, probeKey{}, true), n, "SELECT count() FROM system.zookeeper WHERE path = '/'", nil, nil)
			if err != nil {
				last = err
				if ctx.Err() != nil {
					break
				}
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
		return fmt.Errorf("no clickhouse node reaches zookeeper: %w", last)
	}})
	return out
}

// NodeProbes ping each node, a shard or a replica of one, each probe
// named by the node's URL.
func (c *Cluster) NodeProbes() []catalog.Probe {
	out := make([]catalog.Probe, len(c.cfg.Nodes))
	for i, n := range c.cfg.Nodes {
		out[i] = catalog.Probe{Name: n, Run: func(ctx context.Context) error { return c.ping(ctx, n) }}
	}
	return out
}

// ping asks node n for SELECT 1, as a readiness probe.
func (c *Cluster) ping(ctx context.Context, n string) error {
	resp, err := c.request(context.WithValue(ctx, probeKey{}, true), n, "SELECT 1", nil, nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}
