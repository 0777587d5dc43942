package api

import (
	"context"
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
	m.reg.MustRegister(m.calls, m.latency,
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
			Help: "ClickHouse statements that failed: the cluster unreachable, a shard down, or an error of ClickHouse's."}, func() float64 {
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
