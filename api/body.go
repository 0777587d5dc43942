package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"datadesk"
)

// maxJSONBody bounds small JSON request bodies such as sign-in.
const maxJSONBody = 64 << 10

// decodeJSON reads one JSON object into dst, refusing unknown keys.
func decodeJSON(body io.Reader, dst any) error {
	dec := json.NewDecoder(io.LimitReader(body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return datadesk.Errorf(datadesk.Invalid, "the body must be a JSON object: %s", jsonProblem(err)).WithCause(err)
	}
	return nil
}

// jsonProblem says what is wrong with a JSON body in the project's words:
// a decoder's own message names Go types and never reaches a client.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	case errors.As(err, &syntax):
		return fmt.Sprintf("it is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("%s may not be a JSON %s", typ.Field, typ.Value)
		}
		return fmt.Sprintf("a JSON %s is not allowed there", typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown key " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "it could not be read as JSON"
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
