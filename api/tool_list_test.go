package api_test

import (
	"encoding/json"
	"testing"

	"datadesk/api/apitest"
)

func TestToolList(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, m, _ := ts.Do("GET", "/v1/tools", token, nil, "")
	if code != 200 {
		t.Fatalf("got %d", code)
	}
	tools := m["tools"].([]any)
	if len(tools) != 4 {
		t.Fatalf("got %d tools, want the three specified tools and files.analyze_table", len(tools))
	}
	for _, x := range tools {
		tool := x.(map[string]any)
		name := tool["name"].(string)
		// The specified tools carry their specification's schemas exactly
		// (toolcall's TestToolSchemas); the list serves the registry's.
		t0, err := ts.Server.Calls().Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want := []byte(t0.InputSchema)
		var wantSchema any
		json.Unmarshal(want, &wantSchema)
		if g, w := apitest.MustJSON(tool["input_schema"]), apitest.MustJSON(wantSchema); g != w {
			t.Errorf("%s schema differs from its specification:\n%s\n%s", name, g, w)
		}
		for _, k := range []string{"description", "risk_level", "approval_mode", "enabled"} {
			if tool[k] == nil || tool[k] == "" {
				t.Errorf("%s lacks %s", name, k)
			}
		}
	}
}
