package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestTablePageDefects: smaller defects an analyst met, each fixed: an
// offset past the end showed "showing 1000000-99999999"; decimals were
// shown padded to their scale and long numbers without separators; every
// export was named "(filtered)"; signing in from an Export link left the
// browser on the sign-in page; a viewer saw Upload and Delete controls
// they cannot use.
func TestTablePageDefects(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	apitest.AddUser(t, users, "vic", "viewer")
	for _, u := range []string{"ana", "vic"} {
		if err := users.SetPassword(u, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
	}
	_, m := ts.Upload(ana, "keep.csv", []byte("region,amount,total,year\nNorth,33.93911,123456,2024\nSouth,1.5,99,2023\n"))
	tid := m["file"].(map[string]any)["table_id"].(string)
	client, _, _ := ts.SignIn("ana", "correct horse battery")
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	get := func(c *http.Client, path string) (*http.Response, string) {
		t.Helper()
		resp, err := c.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	_, page := get(client, "/tables/"+tid+"?offset=99999999")
	if !strings.Contains(page, `Showing <span id="range">1–2</span>`) {
		t.Errorf("an offset past the end: %s", between(page, `id="sentence"`, "</p>"))
	}
	for _, want := range []string{">33.93911<", `title="stored as 1.50000">1.5<`, ">123,456<", ">2024<"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	resp, _ := get(client, "/tables/"+tid+"/export?format=csv&o.region=eq&f.region=North")
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "region%20equals") && !strings.Contains(cd, "region equals") {
		t.Errorf("the export's name: %s", cd)
	}

	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := "/tables/" + tid + "/export?format=csv&o.region=eq&f.region=North"
	resp, err := anon.PostForm(ts.URL+"/signin", url.Values{"name": {"ana"}, "password": {"correct horse battery"}, "next": {next}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	flash := false
	for _, ck := range resp.Cookies() {
		flash = flash || ck.Name == "datadesk_flash" && strings.Contains(ck.Value, "Export")
	}
	if resp.StatusCode != http.StatusSeeOther || loc.Path != "/tables/"+tid || loc.Query().Get("f.region") != "North" || !flash {
		t.Errorf("signing in from an export link goes to %d %s, want the table's page in the same view", resp.StatusCode, loc)
	}

	for _, who := range []struct {
		name string
		may  bool
	}{{"ana", true}, {"vic", false}} {
		c, _, _ := ts.SignIn(who.name, "correct horse battery")
		_, files := get(c, "/files")
		if got := strings.Contains(files, `id="upload"`); got != who.may {
			t.Errorf("%s sees the upload form: %v", who.name, got)
		}
		if got := strings.Contains(files, `class="delete-button"`); got != who.may {
			t.Errorf("%s sees delete buttons: %v", who.name, got)
		}
	}
}

// between is the text of s from the first from to the next to after it.
func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	out, _, _ := strings.Cut(rest, to)
	return out
}
