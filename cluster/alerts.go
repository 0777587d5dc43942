package cluster

import _ "embed"

// AlertRules are Prometheus's alerting rules for the nodes and the proxy
// HAProxyConfig writes (`datadesk proxy rules` prints them): a node down,
// not ready or degraded, the callers' 5xx on a node and at the proxy by
// the node that holds their owners, a node the proxy marked down, failed
// ClickHouse calls (failovers apart), ZooKeeper lost. alerts_test.yml
// holds promtool's unit tests of them.
//
//go:embed alerts.yml
var AlertRules string
