// Package procmem reads a process's peak memory, for the commands and
// benchmarks that report it.
package procmem

import (
	"os"
	"strconv"
	"strings"
)

// PeakMiB is the peak resident memory (VmHWM) of process pid ("self" for
// this one) in MiB, 0 where /proc does not say.
func PeakMiB(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
