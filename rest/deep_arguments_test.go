package rest_test

import (
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestDeepArgumentsRefusedFirst: filters nested a thousand groups deep (a
// 10 KB body) were decoded level by level before the plan refused them,
// work that grew with the size times the depth (0.3 s here). Arguments
// nested past what any schema allows are refused before they are decoded
// into the plan's types, naming the arguments.
func TestDeepArgumentsRefusedFirst(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	for _, depth := range []int{30, 1000, 4000} {
		nested := strings.Repeat(`{"any":[`, depth) + `{"column":"region","op":"eq","value":"x"}` + strings.Repeat(`]}`, depth)
		body := `{"arguments":{"file_id":"` + fileID + `","filters":[` + nested + `]}}`
		code, m, _ := ts.Do("POST", "/v1/tools/files.analyze_table", token, strings.NewReader(body), "application/json")
		e, _ := m["error"].(map[string]any)
		if code != 400 || e["field"] != "arguments" || !strings.Contains(e["message"].(string), "nest more than 24 levels") {
			t.Errorf("depth %d: %d %v", depth, code, m)
		}
	}
	// The deepest the schema allows still runs.
	two := `{"any":[{"all":[{"column":"region","op":"eq","value":"north"},{"column":"region","op":"ne","value":"x"}]}]}`
	code, m, _ := ts.Do("POST", "/v1/tools/files.analyze_table", token,
		strings.NewReader(`{"arguments":{"file_id":"`+fileID+`","filters":[`+two+`]}}`), "application/json")
	if code != 200 {
		t.Errorf("two levels of groups: %d %v", code, m)
	}
}
