package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSplitObjectAndCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{`{}`, map[string]string{}},
		{` { "a" : 1 , "b":[1,{"c":"]}"}],"d":"x\"}" ,"e":null,"f":true}`, map[string]string{"a": "1", "b": `[1,{"c":"]}"}]`, "d": `"x\"}"`, "e": "null", "f": "true"}},
		{`{"a":{"b":{}},"a":2}`, map[string]string{"a": "2"}},
		{`{"\u0061":-1.5e3}`, map[string]string{"a": "-1.5e3"}},
	} {
		got, ok := splitObject([]byte(tc.in))
		if !ok {
			t.Errorf("%s: not split", tc.in)
			continue
		}
		gotS := map[string]string{}
		for k, v := range got {
			gotS[k] = string(v)
		}
		if !reflect.DeepEqual(gotS, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.in, gotS, tc.want)
		}
	}
	for in, want := range map[string]int{`[]`: 0, ` [ ] `: 0, `[1]`: 1, `[[1,2],{"a":[3,4]},"x,y"]`: 3, `[null,null]`: 2} {
		if n, ok := countArray([]byte(in)); !ok || n != want {
			t.Errorf("%s: got %d %v, want %d", in, n, ok, want)
		}
		var v []any
		if json.Unmarshal([]byte(in), &v) != nil || len(v) != want {
			t.Errorf("%s: the test's own count is wrong", in)
		}
	}
	if _, ok := countArray([]byte(`{"a":1}`)); ok {
		t.Errorf("an object counted as an array")
	}
}
