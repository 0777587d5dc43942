package toolcall

import (
	"context"
	"strings"

	"datadesk"
	"datadesk/engine"
)

// maxFilenameMatches bounds the files searched for a filename given as an id.
const maxFilenameMatches = 100

// fileIDError turns a not-found file_id that is not an id at all (a model
// often passes the filename) into an answer that says so, names the
// caller's file of that name if there is one, and points to files.read.
// Other errors pass through.
func fileIDError(ctx context.Context, store *engine.Store, field, id string, err error) error {
	if !datadesk.IsNotFound(err) || datadesk.ValidID(id) {
		return err
	}
	msg := field + " %q is not a file id (ids look like f_...); call files.read to list your files with their ids"
	files, ferr := store.Files(ctx, "", maxFilenameMatches)
	if ferr == nil {
		for _, f := range files {
			if strings.EqualFold(f.Filename, strings.TrimSpace(id)) {
				return datadesk.Errorf(datadesk.NotFound, msg+"; the file named %s has file_id %s", id, f.Filename, f.ID).WithField(field)
			}
		}
	}
	return datadesk.Errorf(datadesk.NotFound, msg, id).WithField(field)
}
