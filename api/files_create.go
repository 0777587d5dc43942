package api

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
)

// createArgs are files.create's arguments.
type createArgs struct {
	Filename     string   `json:"filename"`
	Content      *string  `json:"content"`
	FileIDs      []string `json:"file_ids"`
	Columns      []any    `json:"columns"`
	Rows         []any    `json:"rows"`
	SourceFileID string   `json:"source_file_id"`
	Title        string   `json:"title"`
}

// contentFormats are the formats files.create writes from content.
var contentFormats = []string{".txt", ".md", ".csv", ".json"}

// toolFilesCreate runs files.create for files written from content: the
// text is stored as given, and CSV or JSON content is ingested into a table
// like an upload.
func (s *Server) toolFilesCreate(c *echo.Context, args map[string]any) (any, error) {
	var a createArgs
	if err := bindArguments(args, &a); err != nil {
		return nil, err
	}
	filename, err := cleanFilename(a.Filename)
	if err != nil {
		return nil, err.(*datadesk.Error).WithField("filename")
	}
	ext := strings.ToLower(filepath.Ext(filename))
	if a.Content == nil || a.FileIDs != nil || a.Columns != nil || a.Rows != nil || a.SourceFileID != "" {
		return nil, datadesk.Errorf(datadesk.Unsupported,
			"this server creates files from filename and content only; ZIP, columns/rows and source_file_id are not available yet").WithField("filename")
	}
	found := false
	for _, f := range contentFormats {
		found = found || f == ext
	}
	if !found {
		return nil, datadesk.Errorf(datadesk.Invalid, "filename %q: content makes %s files", filename, strings.Join(contentFormats, ", ")).
			WithField("filename").WithAllowed(contentFormats...)
	}
	store, release, err := s.store(c)
	if err != nil {
		return nil, err
	}
	defer release()
	fh, err := os.CreateTemp(store.IncomingDir(), "create-*")
	if err != nil {
		return nil, err
	}
	tmp := fh.Name()
	defer os.Remove(tmp)
	_, err = fh.WriteString(*a.Content)
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	res, err := s.ingest.Read(ctx, tmp, filename, store.IncomingDir())
	if err != nil {
		return nil, err
	}
	defer res.Close()
	f, err := store.AddFile(ctx, engine.NewFile{Filename: filename, ContentType: res.ContentType,
		ChatSession: caller(c).ChatSession, TempPath: tmp, Tables: res.Tables})
	if err != nil {
		return nil, err
	}
	return map[string]any{"file": describe(f)}, nil
}
