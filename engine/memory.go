package engine

import (
	"strconv"
	"strings"
	"syscall"

	"datadesk"
)

// poolShare is the part of Config.MemoryLimit given to DuckDB's buffer
// pool. DuckDB bounds what its buffer manager holds (cached blocks and the
// intermediate results of queries and loads); beside it, the server's own
// code and DuckDB's catalogs and connections keep memory of their own:
// about 150 MB serving a few owners and 0.2 MB more for each attached
// owner, measured at 365 MB with a thousand attached
// (docs/many-owners.md).
const poolShare = 0.8

// minPoolShare is the least of Config.MemoryLimit left to DuckDB's pool
// whatever the server holds beside it.
const minPoolShare = 0.5

// poolBytes is DuckDB's buffer pool: its share of limit less what the
// server holds beside it (Config.HeldBeside), and never under half of
// limit.
func poolBytes(limit, heldBeside int64) int64 {
	return max(int64(float64(limit)*poolShare)-max(heldBeside, 0), int64(float64(limit)*minPoolShare))
}

// byteUnits are the units DuckDB takes in memory settings.
var byteUnits = map[string]float64{
	"": 1, "b": 1, "bytes": 1,
	"k": 1e3, "kb": 1e3, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "tib": 1 << 40,
}

// ParseSize reads the size what is (a setting's name, for the error),
// such as 1GB, 512MiB or 2.5 GB, in DuckDB's units (KB is 1000 bytes, KiB
// 1024). Errors: invalid.
func ParseSize(what, s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i < 0 {
		i = len(t)
	}
	n, err := strconv.ParseFloat(t[:i], 64)
	unit, ok := byteUnits[strings.TrimSpace(t[i:])]
	if err != nil || !ok || n <= 0 {
		return 0, datadesk.Errorf(datadesk.Invalid, "the %s %q is not a size; write a number and a unit such as 512MB or 2GiB", what, s)
	}
	return int64(n * unit), nil
}

// openFileLimit returns the process's limit of open files, 0 if unknown.
func openFileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int(min(r.Cur, 1<<30))
}
