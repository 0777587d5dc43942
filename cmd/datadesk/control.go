package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"datadesk/backup"

	"datadesk"
)

// The control socket: a running server listens on a Unix socket in its
// data directory (mode 0600, so only the account that runs it, who may
// read every owner's files anyway, can connect) and carries out the
// operator's commands that need the owners' databases it holds, such as
// moving a table, without stopping.

// controlSocket is the socket's path in a data directory.
func controlSocket(data string) string { return filepath.Join(data, "control.sock") }

// moveRequest asks the server to move a table.
type moveRequest struct {
	TableID string `json:"table_id"`
	To      string `json:"to"`
	Owner   string `json:"owner,omitempty"`
}

// moveAnswer is what a move prints.
type moveAnswer struct {
	Owner    string `json:"owner"`
	TableID  string `json:"table_id"`
	FileID   string `json:"file_id"`
	Rows     int64  `json:"rows"`
	Location string `json:"location"`
}

// serveControl listens on the data directory's control socket until ctx
// ends. The data directory's lock is held, so a socket file left there is
// a dead process's.
func serveControl(ctx context.Context, src backup.Sources, logger *slog.Logger, record func(operation string, err error, d time.Duration)) error {
	data, eng := src.Data, src.Engine
	path := controlSocket(data)
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return fmt.Errorf("control socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /tables/move", func(w http.ResponseWriter, r *http.Request) {
		var req moveRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
			http.Error(w, "a JSON body {table_id, to, owner} is needed", http.StatusBadRequest)
			return
		}
		began := time.Now()
		owner, t, err := eng.MoveTable(r.Context(), req.Owner, req.TableID, req.To)
		record("table_move", err, time.Since(began))
		if err != nil {
			logger.Error("table move", "table", req.TableID, "err", err)
			controlError(w, err)
			return
		}
		logger.Info("table moved", "owner", owner, "table", t.ID, "to", t.Location)
		_ = json.NewEncoder(w).Encode(moveAnswer{Owner: owner, TableID: t.ID, FileID: t.FileID, Rows: t.RowCount, Location: t.Location})
	})
	mux.HandleFunc("POST /backup", func(w http.ResponseWriter, r *http.Request) {
		var req backupRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || req.Dir == "" {
			http.Error(w, "a JSON body {dir} is needed", http.StatusBadRequest)
			return
		}
		began := time.Now()
		path, err := backup.Make(r.Context(), src, req.Dir)
		record("backup", err, time.Since(began))
		if err != nil {
			logger.Error("backup", "dir", req.Dir, "err", err)
			controlError(w, err)
			return
		}
		logger.Info("backup written", "path", path)
		_ = json.NewEncoder(w).Encode(backupAnswer{Path: path})
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
		_ = os.Remove(path)
	}()
	go func() {
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("control socket", "err", err)
		}
	}()
	return nil
}

// backupRequest asks the server for a backup into Dir; backupAnswer
// names it.
type backupRequest struct {
	Dir string `json:"dir"`
}

type backupAnswer struct {
	Path string `json:"path"`
}

// askServer posts req to the control socket of the server that holds data
// and decodes its answer into out.
func askServer(data, route string, req, out any) error {
	path := controlSocket(data)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	body, _ := json.Marshal(req)
	resp, err := client.Post("http://datadesk"+route, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the server holding %s does not answer on %s: %w", data, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string        `json:"error"`
			Code  datadesk.Code `json:"code"`
			Field string        `json:"field"`
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			return errors.New(strings.TrimSpace(string(raw)))
		}
		if e.Code == "" {
			return errors.New(e.Error)
		}
		// The server's error, with its code, as if made here.
		return datadesk.Errorf(e.Code, "%s", e.Error).WithField(e.Field)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// moveThroughServer asks the server that holds data to move a table.
func moveThroughServer(data string, req moveRequest) (*moveAnswer, error) {
	var a moveAnswer
	if err := askServer(data, "/tables/move", req, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// controlError answers a control request that failed with the error
// model's code, message and field, for askServer to make it again; an
// internal error with its cause.
func controlError(w http.ResponseWriter, err error) {
	e := datadesk.AsError(err)
	msg := e.Message
	if e.Code == datadesk.Internal {
		// The socket is the operator's own (mode 0600): the cause helps.
		msg += ": " + err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Code.Status())
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg, "code": string(e.Code), "field": e.Field})
}
