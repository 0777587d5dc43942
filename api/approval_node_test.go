package api_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/cluster"
)

// TestApprovalRunsOnlyWhereItsOwnerIs: after a new member list gives an
// owner to another node, approving the owner's waiting call here does
// not run it (it would write into an empty account): 409 naming the node,
// and the call stays pending.
func TestApprovalRunsOnlyWhereItsOwnerIs(t *testing.T) {
	t.Parallel()
	alone, err := cluster.ParseNodes("n1=127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	grown, err := cluster.ParseNodes("n1=127.0.0.1:1,n2=127.0.0.1:2")
	if err != nil {
		t.Fatal(err)
	}
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 1 << 20, Cluster: api.ClusterConfig{Ring: alone, Self: "n1", Key: bytes.Repeat([]byte("c"), 32)}}})
	users := ts.Users
	pick := func(prefix, role, node string) string {
		for i := 0; ; i++ {
			name := fmt.Sprintf("%s%d", prefix, i)
			token := apitest.AddUser(t, users, name, role)
			u, err := users.ByName(name)
			if err != nil {
				t.Fatal(err)
			}
			if grown.Owner(u.ID).Name == node {
				return token
			}
		}
	}
	vic, root := pick("vic", "viewer", "n2"), pick("root", "admin", "n1")
	code, m := ts.Call(vic, "files.create", map[string]any{"filename": "n.txt", "content": "x"})
	if code != http.StatusAccepted {
		t.Fatalf("viewer's call: %d %v", code, m)
	}
	id := m["approval"].(map[string]any)["id"].(string)
	before := (*ts.Server.MembersRef())
	(*ts.Server.MembersRef()), err = cluster.NewMembers(grown, "")
	if err != nil {
		t.Fatal(err)
	}
	code, m, _ = ts.Do("POST", "/v1/approvals/"+id+"/approve", root, nil, "")
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(m), "node n2") {
		t.Errorf("approve an owner's call on the node that no longer holds it: %d %v, want 409 naming n2", code, m)
	}
	(*ts.Server.MembersRef()) = before
	code, m, _ = ts.Do("GET", "/v1/approvals/"+id, root, nil, "")
	if a, _ := m["approval"].(map[string]any); code != http.StatusOK || a["status"] != "pending" {
		t.Errorf("the approval after the refusal: %d %v, want pending", code, m)
	}
}
