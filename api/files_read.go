package api

import (
	"strings"

	"datadesk/engine"
)

// readArgs are files.read's arguments.
type readArgs struct {
	FileID      string `json:"file_id"`
	SessionOnly *bool  `json:"session_only"`
	Limit       int    `json:"limit"`
}

// preview tells a chat UI how to display a file.
type preview struct {
	Type       string `json:"type"` // image or table
	URL        string `json:"url"`
	TableID    string `json:"table_id,omitempty"`
	RowCount   int64  `json:"row_count,omitempty"`
	ColumnCnt  int    `json:"column_count,omitempty"`
	ContentTyp string `json:"content_type,omitempty"`
}

type readFile struct {
	fileDescriptor
	Preview *preview `json:"preview,omitempty"`
}

func (s *Server) previewOf(owner string, f *engine.File) *preview {
	d := s.describe(owner, f)
	if strings.HasPrefix(f.ContentType, "image/") {
		return &preview{Type: "image", URL: d.DownloadURL, ContentTyp: f.ContentType}
	}
	if len(f.Tables) > 0 {
		return &preview{Type: "table", URL: d.PreviewURL, TableID: d.TableID, RowCount: *d.RowCount, ColumnCnt: *d.ColumnCount}
	}
	return nil
}

// toolFilesRead runs files.read: one file by id, or the caller's files,
// newest first, this chat session's unless session_only is false.
func (s *Server) toolFilesRead(call *toolCall, args map[string]any) (any, error) {
	var a readArgs
	if err := bindArguments(args, &a); err != nil {
		return nil, err
	}
	store, release, err := s.storeOf(call.ctx, call.caller.UserID)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx := call.ctx
	if a.FileID != "" {
		f, err := store.File(ctx, a.FileID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"file": readFile{s.describe(call.caller.UserID, f), s.previewOf(call.caller.UserID, f)}}, nil
	}
	limit := a.Limit
	if limit == 0 {
		limit = 20
	}
	session := call.caller.ChatSession
	sessionOnly := a.SessionOnly == nil || *a.SessionOnly
	filter := ""
	if sessionOnly {
		filter = session
		if filter == "" {
			// Without a chat session there is no session to narrow to.
			sessionOnly = false
		}
	}
	files, err := store.Files(ctx, filter, limit)
	if err != nil {
		return nil, err
	}
	out := make([]readFile, 0, len(files))
	for i := range files {
		out = append(out, readFile{s.describe(call.caller.UserID, &files[i]), nil})
	}
	return map[string]any{"files": out, "session_only": sessionOnly, "chat_session_id": session}, nil
}
