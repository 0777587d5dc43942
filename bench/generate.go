// Package bench generates synthetic tables and measures datadesk's paths on
// them against baselines run in the same process.
package bench

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// Header is the header of generated tables: identifiers with leading zeros,
// categories, amounts, dates and free text.
var Header = []string{"order_id", "customer_zip", "region", "category", "quantity", "amount", "order_date", "note"}

var (
	regions    = []string{"North", "South", "East", "West", "Central"}
	categories = []string{"books", "garden", "kitchen", "toys", "tools", "music", "sports", "office"}
	words      = []string{"fast", "gift", "return", "fragile", "express", "bulk", "priority", "late", "wrapped", "sample"}
)

// Row returns row i of the synthetic table; the same i always gives the same
// row.
func Row(i int) []string {
	r := rand.New(rand.NewPCG(uint64(i), 42))
	day := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(1800))
	return []string{
		fmt.Sprintf("%010d", i),
		fmt.Sprintf("%05d", r.IntN(99999)),
		regions[r.IntN(len(regions))],
		categories[r.IntN(len(categories))],
		strconv.Itoa(1 + r.IntN(20)),
		fmt.Sprintf("%d.%02d", r.IntN(5000), r.IntN(100)),
		day.Format("2006-01-02"),
		words[r.IntN(len(words))] + " " + words[r.IntN(len(words))],
	}
}

// WriteCSV writes a header and n rows as CSV.
func WriteCSV(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := csv.NewWriter(bw)
	if err := cw.Write(Header); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := cw.Write(Row(i)); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
