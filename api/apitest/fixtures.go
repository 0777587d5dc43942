package apitest

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// OrdersCSV is a small orders file: identifiers with leading zeros, a
// region in mixed case, a missing amount.
const OrdersCSV = "order_id,region,amount,day\n000123,North,10.50,2024-01-02\n123,north,5,2024-01-03\n000124,SOUTH,7.25,2024-02-01\n000125,East,,2024-02-02\n"

// SetupOrders starts a server with analyst ana, who has uploaded
// OrdersCSV, and returns it, ana's token and the file's id.
func SetupOrders(t *testing.T) (*Server, string, string) {
	t.Helper()
	ts := New(t, Options{MaxUpload: 1 << 20})
	token := ts.AddUser("ana", "analyst")
	code, m := ts.Upload(token, "orders.csv", []byte(OrdersCSV))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	return ts, token, m["file"].(map[string]any)["id"].(string)
}

// PostJSON posts a JSON body of size bytes to route as a tool caller or an
// MCP client does, and returns the answer's status and body.
func (ts *Server) PostJSON(route, token string, body io.Reader, size int64) (int, []byte) {
	ts.T.Helper()
	req, err := http.NewRequest("POST", ts.URL+route, body)
	if err != nil {
		ts.T.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// WideTable uploads a table of 40 columns of 2,000 characters per cell.
func WideTable(t *testing.T, ts *Server, token string, rows int) string {
	t.Helper()
	var b strings.Builder
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "col%d", i)
	}
	b.WriteByte('\n')
	cell := strings.Repeat("w", 2000)
	for r := range rows {
		for i := range 40 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d%s", r, cell)
		}
		b.WriteByte('\n')
	}
	code, m := ts.Upload(token, "wide.csv", []byte(b.String()))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	return m["file"].(map[string]any)["table_id"].(string)
}

// RowsCSV is a CSV of n data rows.
func RowsCSV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("id,region\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,r%d\n", i, i%7)
	}
	return b.Bytes()
}

// Multipart is an upload form holding one file, and its content type, for
// a Scenario's Body and ContentType.
func Multipart(filename string, content []byte) (body, contentType string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, _ := mw.CreateFormFile("file", filename)
	w.Write(content)
	mw.Close()
	return b.String(), mw.FormDataContentType()
}
