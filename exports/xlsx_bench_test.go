package exports

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

var benchColumns = []catalog.Column{
	{Key: "id", Type: typing.TypeText, Identifier: true}, {Key: "zip", Type: typing.TypeText, Identifier: true},
	{Key: "region", Type: typing.TypeText}, {Key: "category", Type: typing.TypeText},
	{Key: "qty", Type: typing.TypeInteger}, {Key: "amount", Type: typing.TypeDouble},
	{Key: "price", Type: typing.TypeDouble}, {Key: "day", Type: typing.TypeDate},
	{Key: "ok", Type: typing.TypeBoolean}, {Key: "note", Type: typing.TypeText},
}

var regionNames = []string{"North", "South", "East", "West", "Central"}

func benchRow(i int, row []any) {
	row[0] = fmt.Sprintf("%010d", i)
	row[1] = fmt.Sprintf("%05d", i%99999)
	row[2] = regionNames[i%5]
	row[3] = "cat" + strconv.Itoa(i%37)
	row[4] = int64(i % 50)
	row[5] = float64(i%100000) / 100
	row[6] = float64(i%997) + 0.5
	row[7] = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365)
	row[8] = i%2 == 0
	row[9] = "note " + strconv.Itoa(i%1000)
}

// peakRSS resets the process's peak resident set (Linux) and returns a
// function that reads it, in MiB.
func peakRSS() func() float64 {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return func() float64 {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
				return kb / 1024
			}
		}
		return 0
	}
}

func exportRows() []int {
	if os.Getenv("DATADESK_BENCH_SMALL") != "" {
		return []int{10_000, 100_000}
	}
	return []int{100_000, 1_000_000}
}

// BenchmarkXLSXExport compares WriteXLSX with a bare excelize StreamWriter
// loop over the same values, in the same run, and reports each one's peak
// resident memory: the bare loop ends in excelize's WriteTo, which builds
// the whole zip in memory; WriteXLSX streams it.
func BenchmarkXLSXExport(b *testing.B) {
	for _, n := range exportRows() {
		b.Run(fmt.Sprintf("rows=%d/baseline=bare-streamwriter", n), func(b *testing.B) {
			read := peakRSS()
			for b.Loop() {
				f := excelize.NewFile()
				sw, err := f.NewStreamWriter("Sheet1")
				if err != nil {
					b.Fatal(err)
				}
				row := make([]any, len(benchColumns))
				for i := 0; i < n; i++ {
					benchRow(i, row)
					ref, _ := excelize.CoordinatesToCellName(1, i+1)
					if err := sw.SetRow(ref, row); err != nil {
						b.Fatal(err)
					}
				}
				if err := sw.Flush(); err != nil {
					b.Fatal(err)
				}
				if _, err := f.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
			b.ReportMetric(read(), "peak-MiB")
		})
		b.Run(fmt.Sprintf("rows=%d/datadesk", n), func(b *testing.B) {
			read := peakRSS()
			for b.Loop() {
				src := Source{Columns: benchColumns, Count: int64(n), Rows: func(yield func([]any) error) error {
					row := make([]any, len(benchColumns))
					for i := 0; i < n; i++ {
						benchRow(i, row)
						if err := yield(row); err != nil {
							return err
						}
					}
					return nil
				}}
				if _, err := WriteXLSX(io.Discard, src, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(read(), "peak-MiB")
		})
	}
}
