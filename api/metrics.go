package api

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"datadesk"
	"datadesk/answers"
	"datadesk/engine/catalog"
	"datadesk/toolcall"
)

// metrics are the server's Prometheus metrics: tool calls by tool and
// outcome and their latency, and gauges read when
// scraped (open owners, DuckDB's memory, approvals waiting, ClickHouse
// failures), beside Go's and the process's own.
type metrics struct {
	reg     *prometheus.Registry
	calls   *prometheus.CounterVec
	latency *prometheus.HistogramVec
	// requests and requestTime count every HTTP request by route (the
	// pattern, never the address), method and status class.
	requests    *prometheus.CounterVec
	requestTime *prometheus.HistogramVec
	// requestBytes and responseBytes count the bodies' bytes by route:
	// uploads in, exports out.
	requestBytes, responseBytes *prometheus.CounterVec
	// probes counts the liveness and readiness probes and the scrapes
	// apart from callers' requests, by route and status class.
	probes *prometheus.CounterVec
	// auditFailures counts audit records that could not be written.
	auditFailures prometheus.Counter
	// operations and operationTime count the operator's commands a node
	// runs (table moves, backups) by outcome; lastBackup is the time of
	// the last backup written.
	operations    *prometheus.CounterVec
	operationTime *prometheus.HistogramVec
	lastBackup    prometheus.Gauge
	// routes are the registered routes' patterns, the route label's
	// values beside "unmatched".
	routes map[string]bool
}

// gaugeTimeout bounds a gauge's read at scrape time.
const gaugeTimeout = 2 * time.Second

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "datadesk_tool_calls_total",
		Help: "Tool calls (HTTP and MCP) by tool and outcome: ok, pending (waiting for approval) or the error code."}, []string{"tool", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "datadesk_tool_call_duration_seconds",
		Help: "How long tool calls take, by tool.", Buckets: prometheus.ExponentialBuckets(0.002, 2, 14)}, []string{"tool"})
	gauge := func(name, help string, read func(ctx context.Context) (float64, error)) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), gaugeTimeout)
			defer cancel()
			v, err := read(ctx)
			if err != nil {
				s.cfg.Logger.Warn("metrics: "+name, "err", err)
				return -1
			}
			return v
		})
	}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "datadesk_http_requests_total",
		Help: "HTTP requests by route (its pattern), method and status class (2xx, 3xx, 4xx, 5xx): uploads, lists, deletes, exports, pages and tool calls alike."},
		[]string{"route", "method", "class"})
	m.requestTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "datadesk_http_request_duration_seconds",
		Help: "How long HTTP requests take, by route; a streamed export counts until its last byte.", Buckets: prometheus.ExponentialBuckets(0.002, 2, 16)},
		[]string{"route"})
	m.requestBytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "datadesk_http_request_body_bytes_total",
		Help: "Bytes of request bodies read, by route: uploads, tool calls' arguments."}, []string{"route"})
	m.responseBytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "datadesk_http_response_body_bytes_total",
		Help: "Bytes of response bodies written, by route: exports, downloads, answers."}, []string{"route"})
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "datadesk_probe_requests_total",
		Help: "Requests of /healthz, /readyz and /metrics (the proxy's checks, probes and scrapes) by route and status class: counted here, never among the callers' requests."},
		[]string{"route", "class"})
	m.auditFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "datadesk_audit_failures_total",
		Help: "Audit records that could not be written (the disk full or unwritable): alert on any."})
	m.operations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "datadesk_operations_total",
		Help: "Operator's commands the node ran: table_move (to duckdb or clickhouse) and backup, by outcome (ok or the error code)."},
		[]string{"operation", "outcome"})
	m.operationTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "datadesk_operation_duration_seconds",
		Help: "How long table moves and backups take.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 14)}, []string{"operation"})
	m.lastBackup = prometheus.NewGauge(prometheus.GaugeOpts{Name: "datadesk_last_backup_timestamp_seconds",
		Help: "When the node last wrote a whole backup, in Unix seconds (0: none since it started)."})
	m.reg.MustRegister(m.calls, m.latency, m.requests, m.requestTime, m.requestBytes, m.responseBytes, m.probes, m.auditFailures,
		m.operations, m.operationTime, m.lastBackup,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		gauge("datadesk_open_owners", "Owners whose database is attached now.", func(context.Context) (float64, error) {
			return float64(s.engine.OpenCount()), nil
		}),
		gauge("datadesk_duckdb_memory_bytes", "Memory DuckDB holds now, for every owner together.", func(ctx context.Context) (float64, error) {
			n, err := s.engine.MemoryBytes(ctx)
			return float64(n), err
		}),
		gauge("datadesk_approvals_pending", "Calls waiting for a person's decision.", func(ctx context.Context) (float64, error) {
			n, err := s.system.PendingCount(ctx, s.cfg.Now())
			return float64(n), err
		}))
	answerCount := func(name, help string, read func(answers.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			return float64(read(s.calls.AnswerStats()))
		})
	}
	m.reg.MustRegister(
		answerCount("datadesk_answer_cache_hits_total", "Tool calls answered from the answers' cache (the policy asked first).",
			func(st answers.Stats) uint64 { return st.Hits }),
		answerCount("datadesk_answer_cache_misses_total", "Cacheable tool calls that ran because no answer was kept.",
			func(st answers.Stats) uint64 { return st.Misses }),
		answerCount("datadesk_answer_cache_evictions_total", "Answers dropped from the cache for room.",
			func(st answers.Stats) uint64 { return st.Evictions }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "datadesk_answer_cache_bytes",
			Help: "Bytes the answers' cache holds now, counted against --memory-limit."}, func() float64 {
			return float64(s.calls.AnswerStats().Bytes)
		}))
	m.reg.MustRegister(readinessMetric{s: s, desc: prometheus.NewDesc("datadesk_readiness",
		"The node's readiness, as /readyz says it: 1 for its state (ready, degraded: serving its owners with a ClickHouse shard or ZooKeeper lost; not_ready: it cannot serve them), 0 for the others.",
		[]string{"state"}, nil)})
	if probe, ok := s.engine.ZooKeeperProbe(); ok {
		m.reg.MustRegister(gauge("datadesk_zookeeper_up", "Whether ClickHouse reaches ZooKeeper (1) or not (0), without which replicated tables take no writes.",
			func(ctx context.Context) (float64, error) {
				if probe(ctx) != nil {
					return 0, nil
				}
				return 1, nil
			}))
	}
	if probes, ok := s.engine.RemoteNodeProbes(); ok {
		m.reg.MustRegister(nodesUp{probes: probes, desc: prometheus.NewDesc("datadesk_clickhouse_node_up",
			"Whether each ClickHouse node, a shard or a replica of one, answers (1) or not (0): with replicas the one sign here of a replica down, which readiness leaves to its shard.",
			[]string{"node"}, nil)})
	}
	if _, _, ok := s.engine.RemoteFailures(); ok {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "datadesk_clickhouse_failures_total",
			Help: "ClickHouse statements of calls that failed after every node that could run them was tried: the cluster unreachable, a shard down, or an error of ClickHouse's (readiness probes and failovers not counted)."}, func() float64 {
			n, _, _ := s.engine.RemoteFailures()
			return float64(n)
		}), prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "datadesk_clickhouse_failovers_total",
			Help: "Times a ClickHouse node failed a statement (down, a shard lost, not caught up) and the next node was asked: with replicas, a replica down shows here without any call failing."}, func() float64 {
			_, n, _ := s.engine.RemoteFailures()
			return float64(n)
		}))
	}
	return m
}

// nodesUp pings every ClickHouse node at once when scraped, each within
// the readiness probes' deadline.
type nodesUp struct {
	desc   *prometheus.Desc
	probes []catalog.Probe
}

func (n nodesUp) Describe(ch chan<- *prometheus.Desc) { ch <- n.desc }

func (n nodesUp) Collect(ch chan<- prometheus.Metric) {
	for i, c := range catalog.RunProbes(context.Background(), n.probes, readyProbeTimeout) {
		up := 0.0
		if c.Err == nil {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(n.desc, prometheus.GaugeValue, up, n.probes[i].Name)
	}
}

// readinessMetric runs the readiness probes when scraped, each within
// the probes' deadline, and says the node's state.
type readinessMetric struct {
	s    *Server
	desc *prometheus.Desc
}

func (r readinessMetric) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

func (r readinessMetric) Collect(ch chan<- prometheus.Metric) {
	state, _ := r.s.readiness(context.Background())
	for _, st := range []string{stateReady, stateDegraded, stateNotReady} {
		v := 0.0
		if st == state {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(r.desc, prometheus.GaugeValue, v, st)
	}
}

// observe counts a tool call that took d.
func (m *metrics) observe(tool string, out toolcall.Outcome, d time.Duration) {
	result := "ok"
	switch {
	case out.Err != nil:
		result = outcomeLabel(out.Err)
	case out.Approval != nil:
		result = "pending"
	}
	m.calls.WithLabelValues(tool, result).Inc()
	m.latency.WithLabelValues(tool).Observe(d.Seconds())
}

// handler serves the metrics in Prometheus's text format.
func (m *metrics) handler() echo.HandlerFunc {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return func(c *echo.Context) error {
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// probeRoutes are the routes of the proxy's checks, readiness probes and
// scrapes: counted apart, so that they neither dilute the callers' errors
// (HAProxy checks every node every second) nor add their own (/readyz
// answers 503 when the node is not ready) to them.
var probeRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// http counts each request by its route and status class once it is
// answered, and its bodies' bytes; a probe or a scrape in probes alone.
func (m *metrics) http(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		start := time.Now()
		body := &countedBody{ReadCloser: c.Request().Body}
		c.Request().Body = body
		err := next(c)
		status := http.StatusOK
		if err != nil {
			status, _ = errorStatus(err)
		} else if r, _ := echo.UnwrapResponse(c.Response()); r != nil && r.Status != 0 {
			status = r.Status
		}
		route := m.route(c.Path())
		class := classLabel(status)
		if probeRoutes[route] {
			m.probes.WithLabelValues(route, class).Inc()
			return err
		}
		m.requests.WithLabelValues(route, methodLabel(c.Request().Method), class).Inc()
		m.requestTime.WithLabelValues(route).Observe(time.Since(start).Seconds())
		m.requestBytes.WithLabelValues(route).Add(float64(body.n))
		if r, _ := echo.UnwrapResponse(c.Response()); r != nil {
			m.responseBytes.WithLabelValues(route).Add(float64(r.Size))
		}
		return err
	}
}

// Every label of every metric takes its value from a closed set, never
// from what a client sent as it sent it: a label value is a series kept
// for the life of the process, so a client that could choose them could
// grow the node's memory and its /metrics answer without end.

// knownMethods are the methods counted by name; any other is "other".
var knownMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true, http.MethodConnect: true, http.MethodTrace: true}

func methodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return "other"
}

// classLabel is a status's class, 1xx to 5xx ("other" for none of them).
func classLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// outcomeLabel is the code of err, one of the codes the API answers with
// (an unknown one is internal's).
func outcomeLabel(err error) string {
	return string(datadesk.CodeOfStatus(datadesk.ErrorCode(err).Status()))
}

// route is the label of a request's route: a registered route's pattern,
// or "unmatched".
func (m *metrics) route(path string) string {
	if m.routes[path] {
		return path
	}
	return "unmatched"
}

// knowRoutes records the registered routes' patterns, once every route is
// registered.
func (m *metrics) knowRoutes(routes echo.Routes) {
	m.routes = map[string]bool{}
	for _, r := range routes {
		m.routes[r.Path] = true
	}
}

// countedBody counts the bytes read of a request's body.
type countedBody struct {
	io.ReadCloser
	n int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// RecordOperation counts an operator's command the node ran (operation
// "table_move" or "backup") that took d and ended with err.
func (s *Server) RecordOperation(operation string, err error, d time.Duration) {
	outcome := "ok"
	if err != nil {
		outcome = outcomeLabel(err)
	}
	s.metrics.operations.WithLabelValues(operation, outcome).Inc()
	s.metrics.operationTime.WithLabelValues(operation).Observe(d.Seconds())
	if operation == "backup" && err == nil {
		s.metrics.lastBackup.Set(float64(s.cfg.Now().Unix()))
	}
}
