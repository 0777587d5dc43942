package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"datadesk"
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
	// auditFailures counts audit records that could not be written.
	auditFailures prometheus.Counter
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
	m.auditFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "datadesk_audit_failures_total",
		Help: "Audit records that could not be written (the disk full or unwritable): alert on any."})
	m.reg.MustRegister(m.calls, m.latency, m.requests, m.requestTime, m.auditFailures,
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
	if _, ok := s.engine.RemoteFailures(); ok {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "datadesk_clickhouse_failures_total",
			Help: "ClickHouse statements of calls that failed: the cluster unreachable, a shard down, or an error of ClickHouse's (readiness probes not counted)."}, func() float64 {
			n, _ := s.engine.RemoteFailures()
			return float64(n)
		}))
	}
	return m
}

// observe counts a tool call that took d.
func (m *metrics) observe(tool string, out outcome, d time.Duration) {
	result := "ok"
	switch {
	case out.err != nil:
		result = string(datadesk.ErrorCode(out.err))
	case out.approval != nil:
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

// http counts each request by its route and status class once it is
// answered.
func (m *metrics) http(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		start := time.Now()
		err := next(c)
		status := http.StatusOK
		if err != nil {
			status, _ = errorStatus(err)
		} else if r, _ := echo.UnwrapResponse(c.Response()); r != nil && r.Status != 0 {
			status = r.Status
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		m.requests.WithLabelValues(route, c.Request().Method, strconv.Itoa(status/100)+"xx").Inc()
		m.requestTime.WithLabelValues(route).Observe(time.Since(start).Seconds())
		return err
	}
}
