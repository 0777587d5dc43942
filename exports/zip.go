package exports

import (
	"archive/zip"
	"io"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ZipEntry is a file to put in an archive.
type ZipEntry struct {
	Name     string
	Modified time.Time
	Open     func() (io.ReadCloser, error)
}

// SafeEntryNames returns archive entry names for files: no directories, no
// "..", no control or reserved characters, and unique case-insensitively
// ("report.csv", "report (2).csv").
func SafeEntryNames(names []string) []string {
	out := make([]string, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		n = strings.ReplaceAll(n, "\\", "/")
		n = path.Base("/" + n)
		n = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || strings.ContainsRune(`<>:"|?*`, r) {
				return '_'
			}
			return r
		}, n)
		n = strings.TrimLeft(strings.TrimSpace(n), ".")
		if n == "" || n == "/" {
			n = "file"
		}
		ext := path.Ext(n)
		stem := strings.TrimSuffix(n, ext)
		cand := n
		for k := 2; seen[strings.ToLower(cand)]; k++ {
			cand = stem + " (" + strconv.Itoa(k) + ")" + ext
		}
		seen[strings.ToLower(cand)] = true
		out[i] = cand
	}
	return out
}

// WriteZIP writes entries as a ZIP archive, under safe unique names.
func WriteZIP(w io.Writer, entries []ZipEntry) error {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	safe := SafeEntryNames(names)
	zw := zip.NewWriter(w)
	for i, e := range entries {
		hdr := &zip.FileHeader{Name: safe[i], Method: zip.Deflate, Modified: e.Modified}
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		r, err := e.Open()
		if err != nil {
			return err
		}
		_, err = io.Copy(fw, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return zw.Close()
}
