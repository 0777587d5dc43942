package web

import "testing"

func TestHumanSizesAndKinds(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1.0 kB", 2_300_000: "2.3 MB",
		45_600: "46 kB", 999_960: "1.0 MB", 3_000_000_000: "3.0 GB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
	for _, tc := range []struct{ ct, name, want string }{
		{"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "a.xlsx", "Excel workbook"},
		{"text/csv; charset=utf-8", "a.csv", "CSV table"},
		{"application/octet-stream", "a.parquet", "PARQUET file"},
		{"", "noext", "File"},
	} {
		if got := fileKind(tc.ct, tc.name); got != tc.want {
			t.Errorf("fileKind(%q, %q) = %q, want %q", tc.ct, tc.name, got, tc.want)
		}
	}
}
