package api

import (
	"bytes"
	"encoding/json"
	"io"

	"datadesk"
)

// maxJSONBody bounds small JSON request bodies such as sign-in.
const maxJSONBody = 64 << 10

// decodeJSON reads one JSON object into dst, refusing unknown keys.
func decodeJSON(body io.Reader, dst any) error {
	dec := json.NewDecoder(io.LimitReader(body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return datadesk.Errorf(datadesk.Invalid, "the body must be a JSON object: %v", err)
	}
	return nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
