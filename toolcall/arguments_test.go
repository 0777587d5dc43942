package toolcall

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"datadesk/engine/catalog"
)

// TestArgsHashKeyOrder checks that the audit's hash of equal arguments
// does not depend on the order their keys came in, at any depth, and that
// it is the hash of their canonical JSON: the decoded values as
// encoding/json writes them.
func TestArgsHashKeyOrder(t *testing.T) {
	for _, pair := range [][2]string{
		{`{"file_id":"t1","limit":5,"filters":[{"column":"a","op":"eq","value":"<x & y>"}]}`,
			`{ "filters": [ {"value": "<x & y>", "op": "eq", "column": "a"} ], "limit": 5, "file_id": "t1" }`},
		{`{"a":{"b":1,"c":[1.50,{"e":null,"d":true}]},"s":"\u00e9\n"}`, `{"s":"é\n","a":{"c":[1.50,{"d":true,"e":null}],"b":1}}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{}`, `null`},
	} {
		a, err := DecodeArgumentObject([]byte(pair[0]))
		if err != nil {
			t.Fatal(err)
		}
		b, err := DecodeArgumentObject([]byte(pair[1]))
		if err != nil {
			t.Fatal(err)
		}
		if ha, hb := argsHash(a), argsHash(b); ha != hb || ha == "" {
			t.Errorf("%s and %s: got %s and %s, want one hash", pair[0], pair[1], ha, hb)
		}
		want, _ := json.Marshal(a.Values())
		if got, err := canonicalJSON(a.json()); err != nil || string(got) != string(want) {
			t.Errorf("%s: got %s (%v), want %s", pair[0], got, err, want)
		}
	}
}

// TestBindFromJSON checks that typed arguments are read from the JSON the
// call came as, numbers exact, the rows list left out.
func TestBindFromJSON(t *testing.T) {
	a, err := DecodeArgumentObject([]byte(`{"filename":"a.csv","columns":["n",{"key":"x"}],"rows":[[12345678901234567890]],"title":"T"}`))
	if err != nil {
		t.Fatal(err)
	}
	var c createArgs
	if err := a.bind(&c); err != nil {
		t.Fatal(err)
	}
	if c.Filename != "a.csv" || c.Title != "T" || len(c.Columns) != 2 || a.rows == nil || a.rows.Len() != 1 {
		t.Errorf("got %+v, rows %v", c, a.rows)
	}
	if got := string(a.json()); got != `{"columns":["n",{"key":"x"}],"filename":"a.csv","title":"T"}` {
		t.Errorf("got %s", got)
	}
	stored, err := a.stored()
	if err != nil || string(stored) != `{"columns":["n",{"key":"x"}],"filename":"a.csv","rows":[[12345678901234567890]],"title":"T"}` {
		t.Errorf("got %s (%v)", stored, err)
	}
}

// BenchmarkReadArguments reads a files.analyze_table call's arguments as
// Invoke does: decode, validate, bind the typed analysis, hash for the
// audit; "encoded-again" binds and hashes the decoded values encoded
// again, as the arguments were read before, for comparison.
func BenchmarkReadArguments(b *testing.B) {
	tools, err := loadTools()
	if err != nil {
		b.Fatal(err)
	}
	t := tools["files.analyze_table"]
	raw := []byte(`{"file_id": "t_orders", "group_by": ["region", {"column": "day", "bucket": "month"}],
		"measures": [{"op": "sum", "column": "amount", "name": "total"}, {"op": "median", "column": "amount"}, {"op": "count_distinct", "column": "customer"}],
		"filters": [{"column": "status", "op": "in", "value": ["paid", "shipped"]}, {"any": [{"column": "amount", "op": "gt", "value": 10}, {"column": "note", "op": "starts_with", "value": "vip"}]}],
		"sort_by": "total", "direction": "desc", "limit": 20}`)
	for _, bc := range []struct {
		name string
		read func(args *Arguments, dst any) (string, error)
	}{
		{"once", func(args *Arguments, dst any) (string, error) { return argsHash(args), args.bind(dst) }},
		{"encoded-again", func(args *Arguments, dst any) (string, error) {
			j, _ := json.Marshal(args.values)
			err := bindJSON(args.values, j, dst)
			j, _ = json.Marshal(args.values)
			sum := sha256.Sum256(j)
			return hex.EncodeToString(sum[:]), err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				args, err := DecodeArgumentObject(raw)
				if err != nil {
					b.Fatal(err)
				}
				if err := t.check(args); err != nil {
					b.Fatal(err)
				}
				var a catalog.Analysis
				if h, err := bc.read(args, &a); err != nil || h == "" {
					b.Fatal(err)
				}
			}
		})
	}
}
