package api_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"datadesk/api/apitest"
	"datadesk/engine"
)

// TestUnavailableSaysWhenToRetry: during a move, a call that reached the
// engine after it had withheld the owner answered 503 without
// Retry-After, where a call stopped before it got one. Every 503 now says
// when to try again (a 429 too).
func TestUnavailableSaysWhenToRetry(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Engine: engine.Config{}})
	users := ts.Users
	u, token, err := users.Add("ana", "analyst")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Server.Engine().Withhold(context.Background(), u.ID); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/v1/files", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("got %d %s, want 503", res.StatusCode, body)
	}
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1; body %s", got, body)
	}
}
