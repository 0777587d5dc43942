package links

import (
	"net/url"
	"testing"
	"time"

	"datadesk"
)

func TestSignAndRead(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := Signer{Key: make([]byte, 32), Now: func() time.Time { return now }}
	owner, file := datadesk.NewID("u"), datadesk.NewID("f")
	u, err := url.Parse(s.URL(file, owner))
	if err != nil {
		t.Fatal(err)
	}
	tok := u.Query().Get(Param)
	got, issued, err := s.Read(tok, file)
	if err != nil || got != owner || !issued.Equal(now.Truncate(time.Second)) {
		t.Fatalf("read %q %v %v, want %q issued %v", got, issued, err, owner, now)
	}
	if u.Query().Get(OwnerParam) != "" {
		t.Errorf("a link outside a cluster names its owner: %s", u)
	}
	for name, tc := range map[string]struct{ token, file string }{
		"another file": {tok, datadesk.NewID("f")},
		"malformed":    {"soon", file},
		"changed":      {tok[:len(tok)-2] + "AA", file},
	} {
		if _, _, err := s.Read(tc.token, tc.file); datadesk.ErrorCode(err) != datadesk.Unauthenticated {
			t.Errorf("%s: %v, want unauthenticated", name, err)
		}
	}
	now = now.Add(TTL + time.Second)
	if _, _, err := s.Read(tok, file); datadesk.ErrorCode(err) != datadesk.Unauthenticated {
		t.Errorf("expired link: %v", err)
	}
	s.Routed = true
	if u, _ := url.Parse(s.URL(file, owner)); u.Query().Get(OwnerParam) != owner {
		t.Errorf("a routed link does not name its owner: %s", u)
	}
}
