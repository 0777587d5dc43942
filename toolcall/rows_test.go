package toolcall

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"datadesk"
)

// TestArgumentsRead: a call's arguments are read member by member; a rows
// list stays as it came, read again from the body, and a key given twice
// keeps its last value.
func TestArgumentsRead(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{`{}`, map[string]string{}},
		{`null`, map[string]string{}},
		{` { "a" : 1 , "b":[1,{"c":"]}"}],"d":"x\"}" ,"e":null,"f":true}`, map[string]string{"a": "1", "b": `[1,{"c":"]}"}]`, "d": `"x\"}"`, "e": "null", "f": "true"}},
		{`{"a":{"b":{}},"a":2}`, map[string]string{"a": "2"}},
		{`{"\u0061":-1.5e3}`, map[string]string{"a": "-1.5e3"}},
		{`{"rows" :  [ [1, "a"] ,{"x":[2]} ] , "rows2":[]}`, map[string]string{"rows": `[ [1, "a"] ,{"x":[2]} ]`, "rows2": "[]"}},
		{`{"rows":[1],"rows":[[2], [3]]}`, map[string]string{"rows": `[[2], [3]]`}},
		{`{"rows":"not a list"}`, map[string]string{"rows": `"not a list"`}},
	} {
		args, err := DecodeArgumentObject([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got := map[string]string{}
		for k, v := range args.Values() {
			if r, ok := v.(*Rows); ok {
				b, _ := io.ReadAll(r.reader())
				got[k] = string(b)
				continue
			}
			b, _ := json.Marshal(v)
			got[k] = string(b)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{`[]`, `{"a":1`, `{"rows":[1,}`, `{"rows":[1]} x`, `{"a":1}{}`, `"x"`} {
		if _, err := DecodeArgumentObject([]byte(in)); err == nil || datadesk.AsError(err).Code != datadesk.Invalid {
			t.Errorf("%s: got %v, want invalid", in, err)
		}
	}
	for in, want := range map[string]int{`[]`: 0, ` [ ] `: 0, `[1]`: 1, `[[1,2],{"a":[3,4]},"x,y"]`: 3, `[null,null]`: 2} {
		if n, ok := CountItems(io.NewSectionReader(strings.NewReader(in), 0, int64(len(in)))); !ok || n != want {
			t.Errorf("%s: got %d %v, want %d", in, n, ok, want)
		}
		var v []any
		if json.Unmarshal([]byte(in), &v) != nil || len(v) != want {
			t.Errorf("%s: the test's own count is wrong", in)
		}
	}
	if _, ok := CountItems(io.NewSectionReader(strings.NewReader(`{"a":1}`), 0, 7)); ok {
		t.Errorf("an object counted as an array")
	}
}
