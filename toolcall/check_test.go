package toolcall

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"datadesk/engine"
	"datadesk/rbac"
)

// TestCheckOpensStoreOnlyForWork: deciding a call opens the owner's
// database only when the call's attributes are read from the owner's data
// (an analysis's table), so `policy check` of other calls works beside a
// running server, which holds that database.
func TestCheckOpensStoreOnlyForWork(t *testing.T) {
	dir := t.TempDir()
	eng, err := engine.New(engine.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	users, err := rbac.OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	user, _, err := users.Add("ana", "analyst")
	if err != nil {
		t.Fatal(err)
	}
	policy, err := rbac.NewPolicy(rbac.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	ownerDir := filepath.Join(dir, "owners", user.ID)
	ctx := context.Background()
	for _, tool := range []string{"files.read", "files.query_table"} {
		args := map[string]any{}
		if tool == "files.query_table" {
			args["file_id"] = "f_abcdefghijklmnopqrstuvwxyz"
		}
		if d, err := Check(ctx, policy, eng, user, tool, args); err != nil || !d.Allowed() {
			t.Fatalf("%s: %+v %v", tool, d, err)
		}
		if _, err := os.Stat(ownerDir); !os.IsNotExist(err) {
			t.Fatalf("%s: the owner's folder was made (%v)", tool, err)
		}
	}
	args := map[string]any{"file_id": "f_abcdefghijklmnopqrstuvwxyz", "measures": []any{map[string]any{"op": "count"}}}
	if _, err := Check(ctx, policy, eng, user, "files.analyze_table", args); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ownerDir); err != nil {
		t.Errorf("an analysis's attributes did not read the owner's store: %v", err)
	}
}
