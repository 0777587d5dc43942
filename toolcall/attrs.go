package toolcall

import (
	"context"
	"fmt"
	"io"
	"os"

	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/rbac"
)

// workAttrs are a call's attributes as the work sees them, so a policy
// condition cannot be passed by pointing at data instead of sending it, or
// by sending it in another form: a copy by source_file_id has the source
// table's rows and columns, a ZIP the sum of its members' sizes, CSV or
// JSON content the rows and columns ingest finds in it, and every file
// the format of its name as the file is stored (callAttrs). Ids that are
// not the owner's add nothing; the call itself then answers not found.
// The owner's store is opened (open) only for a call whose work is read.
func workAttrs(ctx context.Context, open func() (*engine.Store, error), in *ingest.Ingester, t *Tool, args *Arguments) (rbac.Attrs, error) {
	a := callAttrs(t, args.values)
	if wr, ok := t.impl.(workReader); ok {
		return wr.workAttrs(ctx, open, in, args, a)
	}
	return a, nil
}

// contentShape reads CSV or JSON content as ingest will and returns its
// rows (summed over its tables) and widest header. Content that ingest
// cannot read as a table has none; the call itself says why.
func contentShape(ctx context.Context, in *ingest.Ingester, store *engine.Store, content, format string) (rows, cols int, err error) {
	fh, err := os.CreateTemp(store.IncomingDir(), "attrs-*")
	if err != nil {
		return 0, 0, diskError(err)
	}
	defer os.Remove(fh.Name())
	_, err = io.WriteString(fh, content)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, diskError(err)
	}
	res, err := in.Read(ctx, fh.Name(), "content."+format, store.IncomingDir())
	if err != nil {
		return 0, 0, nil
	}
	defer res.Close()
	for _, src := range res.Tables {
		cols = max(cols, len(src.Header))
		n, err := engine.CountRows(src)
		if err != nil {
			return 0, 0, nil
		}
		rows += n
	}
	return rows, cols, nil
}

// diskError is a failed write of the call's own: unavailable saying the
// disk is full when it is, as an upload says, else internal.
func diskError(err error) error {
	if engine.NoSpace(err) {
		return engine.NoSpaceError(err)
	}
	return fmt.Errorf("toolcall: %w", err)
}

// callStore acquires the caller's store at its first use in a call, once,
// and releases it when the call ends: a call the policy refuses before
// its work is read never opens it.
type callStore struct {
	ctx     context.Context
	engine  *engine.Engine
	owner   string
	store   *engine.Store
	release func()
}

func (c *callStore) get() (*engine.Store, error) {
	if c.store == nil {
		store, release, err := c.engine.Acquire(c.ctx, c.owner)
		if err != nil {
			return nil, err
		}
		c.store, c.release = store, release
	}
	return c.store, nil
}

func (c *callStore) close() {
	if c.release != nil {
		c.release()
	}
}
