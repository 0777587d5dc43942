package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"datadesk"
)

// errWithheld answers the calls of an owner that is moving to another node.
var errWithheld = datadesk.Errorf(datadesk.Unavailable, "this account is moving to another node; try again in a moment")

// Withhold takes owner out of service on this node for a move: calls that
// arrive answer unavailable, the calls already running finish, and the
// owner's database is closed, so that its folder can be copied whole. If
// ctx ends first, the owner is back in service and Withhold answers
// unavailable.
func (e *Engine) Withhold(ctx context.Context, owner string) error {
	if !datadesk.ValidID(owner) {
		return datadesk.Errorf(datadesk.Invalid, "invalid owner id")
	}
	e.mu.Lock()
	e.withheld[owner] = true
	e.mu.Unlock()
	if err := e.CloseOwner(ctx, owner); err != nil {
		e.Admit(owner)
		return datadesk.Errorf(datadesk.Unavailable, "the account's calls did not finish in time for its move; try again when it is quieter").WithCause(err)
	}
	return nil
}

// Admit puts owner in service: after a move that failed, or on the node an
// owner moved to, whose folder was just written. Nothing read of the
// owner's catalog before is kept.
func (e *Engine) Admit(owner string) {
	e.mu.Lock()
	delete(e.withheld, owner)
	delete(e.ready, owner)
	e.mu.Unlock()
	e.caches.drop(owner)
}

// DropOwner removes the folder of an owner withheld for a move that is
// done: the owner's database and files now live on another node.
func (e *Engine) DropOwner(owner string) error {
	e.mu.Lock()
	withheld := e.withheld[owner]
	e.mu.Unlock()
	if !withheld {
		return datadesk.Errorf(datadesk.Conflict, "the account is in service on this node; only a moved account's folder is removed")
	}
	e.caches.drop(owner)
	dir := e.OwnerDir(owner)
	gone := filepath.Join(e.cfg.Dir, "owners", ".moved-"+owner+"-"+datadesk.NewID("mv"))
	if err := os.Rename(dir, gone); err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("engine: %w", err)
	}
	return os.RemoveAll(gone)
}

// StageOwner makes an empty folder beside the owners' folders, where an
// owner's folder arriving from another node is written before
// InstallOwner puts it in place.
func (e *Engine) StageOwner(owner string) (string, error) {
	if !datadesk.ValidID(owner) {
		return "", datadesk.Errorf(datadesk.Invalid, "invalid owner id")
	}
	dir := filepath.Join(e.cfg.Dir, "owners", ".incoming-"+owner+"-"+datadesk.NewID("mv"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("engine: %w", err)
	}
	return dir, nil
}

// InstallOwner puts a staged folder in place as a withheld owner's folder,
// replacing the one there was.
func (e *Engine) InstallOwner(owner, staged string) error {
	e.mu.Lock()
	withheld := e.withheld[owner]
	e.mu.Unlock()
	if !withheld {
		return datadesk.Errorf(datadesk.Conflict, "the account is in service on this node; withhold it before its folder is replaced")
	}
	dir := e.OwnerDir(owner)
	old := filepath.Join(e.cfg.Dir, "owners", ".moved-"+owner+"-"+datadesk.NewID("mv"))
	if err := os.Rename(dir, old); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("engine: %w", err)
	}
	if err := os.Rename(staged, dir); err != nil {
		// Put back what was there.
		_ = os.Rename(old, dir)
		return fmt.Errorf("engine: %w", err)
	}
	return os.RemoveAll(old)
}

// sweepHandoffs removes what moves between nodes left behind when the
// process stopped: folders staged or set aside (their owners are either
// in place or still on the node they came from).
func sweepHandoffs(dir string) error {
	entries, err := os.ReadDir(filepath.Join(dir, "owners"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	for _, d := range entries {
		name := d.Name()
		if d.IsDir() && (strings.HasPrefix(name, ".incoming-") || strings.HasPrefix(name, ".moved-")) {
			if err := os.RemoveAll(filepath.Join(dir, "owners", name)); err != nil {
				return fmt.Errorf("engine: %w", err)
			}
		}
	}
	return nil
}
