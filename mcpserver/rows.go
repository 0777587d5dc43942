package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"datadesk"
	"datadesk/toolcall"
)

// decodeMCPArguments reads a call's arguments as the HTTP path does, and
// takes back rows set aside from the request's body (setRowsAside).
// Errors: invalid.
func decodeMCPArguments(ctx context.Context, raw json.RawMessage) (*toolcall.Arguments, error) {
	args, err := toolcall.DecodeArgumentObject(raw)
	if err != nil {
		return nil, err
	}
	if aside, ok := ctx.Value(mcpRowsKey{}).(mcpRows); ok {
		if ref, ok := args.Get(toolcall.RowsArgument).(string); ok && aside[ref] != nil {
			args.SetRows(aside[ref])
		}
	}
	return args, nil
}

// mcpRows are the rows of tools/calls whose body was too large to hold,
// by the reference that stands for them: the SDK reads every message
// whole, several times over, so the message it is given names the rows,
// and the call takes them back from the body kept in a file. References
// are drawn at random for each request, so no client can name rows but
// its own call's.
type mcpRows map[string]*toolcall.Rows

type mcpRowsKey struct{}

// setRowsAside returns the JSON-RPC message or batch in body for the SDK to
// read: each tools/call whose arguments hold a list of rows is given with
// the rows replaced by a reference, and the rows are returned by their
// references, to be taken back by the calls; a body with none, or not
// JSON, is given as it came.
func setRowsAside(body *io.SectionReader) (io.Reader, mcpRows) {
	dec := toolcall.NewDecoder(body)
	var found []*toolcall.Rows
	message := func() error {
		method, rows, err := readMessage(dec, body)
		if err == nil && method == "tools/call" && rows != nil {
			found = append(found, rows)
		}
		return err
	}
	var err error
	if toolcall.NextByte(dec, body) == '[' {
		_, err = dec.Token()
		for err == nil && dec.More() {
			err = message()
		}
		if err == nil {
			_, err = dec.Token()
		}
	} else {
		err = message()
	}
	if err == nil {
		err = toolcall.AtEnd(dec)
	}
	if err != nil || len(found) == 0 {
		return io.NewSectionReader(body, 0, body.Size()), nil
	}
	aside := mcpRows{}
	var parts []io.Reader
	at := int64(0)
	for _, rows := range found {
		ref := "datadesk-rows-" + datadesk.NewID("r")
		aside[ref] = rows
		off, n := rows.Span()
		parts = append(parts, io.NewSectionReader(body, at, off-at), strings.NewReader(`"`+ref+`"`))
		at = off + n
	}
	parts = append(parts, io.NewSectionReader(body, at, body.Size()-at))
	return io.MultiReader(parts...), aside
}

// readMessage reads the JSON-RPC message next in dec from body, and
// returns its method and the rows of its arguments, when they are a list
// (toolcall.ReadRows).
func readMessage(dec *json.Decoder, body io.ReaderAt) (method string, rows *toolcall.Rows, err error) {
	skip := func() error { return toolcall.ReadValue(dec, new(json.RawMessage)) }
	err = toolcall.ReadObject(dec, false, func(key string) error {
		switch {
		case key == "method":
			return toolcall.ReadValue(dec, &method)
		case key != "params" || toolcall.NextByte(dec, body) != '{':
			return skip()
		}
		return toolcall.ReadObject(dec, false, func(key string) error {
			if key != "arguments" || toolcall.NextByte(dec, body) != '{' {
				return skip()
			}
			return toolcall.ReadObject(dec, false, func(key string) error {
				if key != toolcall.RowsArgument || toolcall.NextByte(dec, body) != '[' {
					return skip()
				}
				var err error
				rows, err = toolcall.ReadRows(dec, body)
				return err
			})
		})
	})
	return method, rows, err
}
