package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzAnalysisPlan checks arbitrary files.analyze_table arguments against
// a table and a lookup table: no input panics, and none takes longer than
// a second to check, whatever its measures and filters name.
func FuzzAnalysisPlan(f *testing.F) {
	var probe []string
	probe = append(probe, `{"op":"count"}`, `{"name":"a0","expr":"count/count"}`)
	for i := 1; i <= 7; i++ {
		probe = append(probe, fmt.Sprintf(`{"name":"a%d","expr":%q}`, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("a%d*", i-1), 16), "*")))
	}
	for _, seed := range []string{
		`{"file_id":"t1","measures":[` + strings.Join(probe, ",") + `]}`,
		`{"file_id":"t1","group_by":["region",{"column":"day","bucket":"month"}],"measures":[{"op":"sum","column":"amount"},{"op":"running_total","of":"sum_amount"}]}`,
		`{"file_id":"t1","filters":[{"any":[{"column":"region","op":"eq","value":"north"},{"all":[{"column":"qty","op":"between","value":[1,5]}]}]}]}`,
		`{"file_id":"t1","group_by":["region","lookup.continent"],"measures":[{"op":"count"}],"top":{"n":2,"per":["lookup.continent"],"by":"count"},"lookup":{"file_id":"t2","on":[{"column":"region","lookup_column":"name"}]}}`,
		`{"file_id":"t1","group_by":["region"],"measures":[{"op":"avg","column":"amount","name":"x"},{"name":"y","expr":"x*x/(x-1)"}],"having":[{"measure":"y","op":"gt","value":2}]}`,
	} {
		f.Add([]byte(seed))
	}
	lookup := &Table{ID: "t2", Columns: []Column{{Key: "name", Type: "text"}, {Key: "continent", Type: "text"}}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var a Analysis
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&a) != nil {
			return
		}
		var lt *Table
		if a.Lookup != nil {
			lt = lookup
		}
		start := time.Now()
		if p, err := AnalysisFor(ordersTable, lt, a); err == nil {
			p.ExprLevels()
			p.OutNames()
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("checking took %v", d)
		}
	})
}
