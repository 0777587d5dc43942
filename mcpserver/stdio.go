package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
	"datadesk/toolcall"
)

// ServeStdio serves the Model Context Protocol over r and w (a process's
// stdin and stdout) for the user whose bearer token is given, until the
// client leaves or ctx ends. The token is checked again at every call, so
// a revoked token or a changed role takes effect at once. Errors:
// unauthenticated (token).
func (h *Handler) ServeStdio(ctx context.Context, token string, r io.ReadCloser, w io.WriteCloser) error {
	token = strings.TrimSpace(token)
	resolve := func(context.Context) (datadesk.Caller, error) {
		user, err := h.d.Users.Authenticate(token)
		if err != nil {
			return datadesk.Caller{}, err
		}
		return datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role}, nil
	}
	if _, err := resolve(ctx); err != nil {
		return err
	}
	out := &lockedWriter{w: w}
	in := &batchLimiter{r: bufio.NewReaderSize(r, 1<<20), w: out, closer: r}
	return h.mcpServer(resolve).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: toolcall.MaxBody})
}

// lockedWriter serialises writes of the SDK and of batchLimiter.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// batchLimiter passes a stdio stream of JSON-RPC messages, one per line,
// and answers a batch of more than maxBatch messages itself with an
// error instead of passing it on. Lines longer than its buffer (1 MiB) are
// a call's arguments and pass uncounted.
type batchLimiter struct {
	r      *bufio.Reader
	w      io.Writer
	closer io.Closer
	rest   []byte
	// midLine is set while a line longer than the buffer passes.
	midLine bool
}

func (b *batchLimiter) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		line, err := b.r.ReadSlice('\n')
		long := errors.Is(err, bufio.ErrBufferFull)
		if long || b.midLine {
			// A long line is a call's arguments, not a batch to count.
			b.midLine = long
			b.rest = append([]byte(nil), line...)
			if long {
				break
			}
		} else if n, ok := toolcall.CountItems(io.NewSectionReader(bytes.NewReader(line), 0, int64(len(line)))); ok && n > maxBatch {
			msg := fmt.Sprintf("a JSON-RPC batch holds %d messages; at most %d are taken at once", n, maxBatch)
			answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": msg}})
			if _, werr := b.w.Write(append(answer, '\n')); werr != nil {
				return 0, werr
			}
		} else {
			b.rest = append([]byte(nil), line...)
		}
		if err != nil {
			if len(b.rest) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *batchLimiter) Close() error { return b.closer.Close() }
