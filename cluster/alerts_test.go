package cluster_test

import (
	"os/exec"
	"testing"

	"datadesk/internal/testenv"
)

// TestAlertRules: the alerting rules pass promtool's check, and its unit
// tests of them pass: a node down and a node marked down page, the
// proxy's 5xx page by the node that holds the owners, ZooKeeper lost with
// no call failing raises tickets and no page, failed ClickHouse calls page.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Missing(t, "promtool is not installed (make deps installs Debian's prometheus)")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
