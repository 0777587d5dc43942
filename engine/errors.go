package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk"
)

// classify turns a DuckDB or context error into the project's error model.
// It is the one place that knows DuckDB's error types.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var de *datadesk.Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errIs(err, duckdb.ErrorTypeInterrupt) && ctx.Err() != nil {
		return datadesk.Errorf(datadesk.Timeout, "the operation took longer than allowed").WithCause(err)
	}
	if errors.Is(err, context.Canceled) {
		return datadesk.Errorf(datadesk.Timeout, "the request was cancelled").WithCause(err)
	}
	if errIs(err, duckdb.ErrorTypeOutOfMemory) || appenderOutOfMemory(err) {
		return datadesk.Errorf(datadesk.TooLarge, "the operation needs more memory than this server allows").WithCause(err)
	}
	if NoSpace(err) {
		return NoSpaceError(err)
	}
	if errIs(err, duckdb.ErrorTypeIO) {
		// The owner's database file or the temp folder cannot be read or
		// written: the disk, not the request.
		return datadesk.Errorf(datadesk.Unavailable, "the owner's storage cannot be read or written now; try again later").WithCause(err)
	}
	return fmt.Errorf("engine: %w", err)
}

// appenderOutOfMemory says err is DuckDB's appender failing for want of
// memory: the appender reports what stopped it with no error type
// ("Failed to append: could not allocate block of size 256.0 KiB ..."),
// so its message, DuckDB's buffer manager's own, is all that tells. A
// table being loaded is held in memory until its row group fills, a
// few blocks a column, so a wide one can need more than the pool.
func appenderOutOfMemory(err error) bool {
	var de *duckdb.Error
	return errors.As(err, &de) && de.Type == duckdb.ErrorTypeInvalid &&
		strings.Contains(de.Msg, "could not allocate block of size")
}

// readRefused says DuckDB's reader gave up on the file of the table
// with this ordinal: its strict CSV parser has no state for some files
// (a carriage return alone in a field, lines ending two ways). The error
// fails the load's transaction; AddFile reads the file again, in a new
// one, with Go's reader, which takes such files.
type readRefused struct {
	ordinal int
	err     error
}

func (e *readRefused) Error() string {
	return "engine: the file reader refused the file: " + e.err.Error()
}
func (e *readRefused) Unwrap() error { return e.err }

// readerRefused is err of a statement reading table ordinal's file with
// DuckDB's reader: a readRefused when the reader refused the file's
// input, else classified.
func readerRefused(ctx context.Context, err error, ordinal int) error {
	if errIs(err, duckdb.ErrorTypeInvalidInput) && ctx.Err() == nil {
		return &readRefused{ordinal: ordinal, err: err}
	}
	return classify(ctx, err)
}
