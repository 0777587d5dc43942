package toolcall

import (
	"bytes"

	"datadesk/answers"
	"datadesk/engine"
	"datadesk/rbac"
)

// CachedField is the field a result answered from memory carries, true;
// a result that ran has none.
const CachedField = "cached"

// answerKey is the key a call's answer is kept under in the answers'
// cache, and false for a call whose answer is not kept: only
// files.query_table and files.analyze_table read without writing, and
// only when they neither store a view (show), read a file again (reading)
// nor read a lookup table, whose reading the policy decides inside the
// call. The owner's data version is taken now, before the call runs: an
// answer may be kept under a version the data has left while it ran,
// which no later call asks for, never under a newer one.
func answerKey(store *engine.Store, t *Tool, args *Arguments) (answers.Key, bool) {
	if t.Name != rbac.ActionQueryTable && t.Name != rbac.ActionAnalyze {
		return answers.Key{}, false
	}
	if show, _ := args.Get("show").(bool); show {
		return answers.Key{}, false
	}
	if args.Get("lookup") != nil {
		return answers.Key{}, false
	}
	if _, reading := args.values["reading"]; reading {
		return answers.Key{}, false
	}
	// One call's arguments give one text however their keys were ordered
	// or spaced.
	canon, err := args.canonical()
	if err != nil {
		return answers.Key{}, false
	}
	return answers.Key{Owner: store.Owner(), Tool: t.Name, Args: string(canon), Version: store.Version()}, true
}

// markCached returns a copy of an object's JSON with CachedField set.
func markCached(raw []byte) []byte {
	i := bytes.LastIndexByte(raw, '}')
	if i < 0 {
		return raw
	}
	out := make([]byte, 0, len(raw)+len(CachedField)+8)
	out = append(out, raw[:i]...)
	if len(bytes.TrimSpace(raw[:i])) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"`+CachedField+`":true}`...)
	return append(out, raw[i+1:]...)
}
