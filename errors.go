// Package datadesk holds the vocabulary every other package shares: the error
// model, identifiers and the caller's identity. It imports nothing of the
// project and nothing outside the standard library.
package datadesk

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error class. The API maps each code to
// one HTTP status; clients may rely on the names.
type Code string

// Error codes. Their HTTP statuses are fixed by the interface contract.
const (
	Invalid         Code = "invalid"
	Unauthenticated Code = "unauthenticated"
	Forbidden       Code = "forbidden"
	NotFound        Code = "not_found"
	Conflict        Code = "conflict"
	TooLarge        Code = "too_large"
	Unsupported     Code = "unsupported"
	Timeout         Code = "timeout"
	// RateLimited says to try again later: too many attempts, or the
	// server is busy with the same work for others.
	RateLimited Code = "rate_limited"
	// Misdirected says the request reached a node that does not hold its
	// owner: the proxy and the node disagree on the member list.
	Misdirected Code = "misdirected"
	// Unavailable says a part the request needs cannot be reached now (a
	// peer node, a ClickHouse shard); the message names it.
	Unavailable Code = "unavailable"
	Internal    Code = "internal"
)

// statuses maps each code to its HTTP status; the one table. The numbers
// are written out: net/http would bring cgo into every package, the
// catalog and typing too, which must build without it.
var statuses = map[Code]int{
	Invalid:         400,
	Unauthenticated: 401,
	Forbidden:       403,
	NotFound:        404,
	Conflict:        409,
	TooLarge:        413,
	Unsupported:     415,
	Timeout:         504,
	RateLimited:     429,
	Misdirected:     421,
	Unavailable:     503,
	Internal:        500,
}

// Status is the HTTP status of an error of code c: the API's, the status
// an MCP call's audit entry records, and that of the control socket's
// answers. An unknown code is an internal error's.
func (c Code) Status() int {
	if status, ok := statuses[c]; ok {
		return status
	}
	return 500
}

// CodeOfStatus is the code whose status is status: internal for one no
// code has.
func CodeOfStatus(status int) Code {
	for code, st := range statuses {
		if st == status {
			return code
		}
	}
	return Internal
}

// Public is what a client is told of an error: its code, message, field
// and allowed values. An internal error's message is "internal error",
// its cause never told.
type Public struct {
	Code    Code     `json:"code"`
	Message string   `json:"message"`
	Field   string   `json:"field,omitempty"`
	Allowed []string `json:"allowed,omitempty"`
}

// PublicOf is what a client is told of err.
func PublicOf(err error) Public {
	e := AsError(err)
	if e.Code == Internal {
		return Public{Code: Internal, Message: "internal error"}
	}
	return Public{Code: e.Code, Message: e.Message, Field: e.Field, Allowed: e.Allowed}
}

// Error is the one error type that crosses package boundaries with meaning.
// Message is safe to show to the user; Err, the cause, never leaves the
// server.
type Error struct {
	Code    Code
	Message string
	// Field names the argument or input part that was wrong, if any.
	Field string
	// Allowed lists the accepted values or keys, if the problem is a choice.
	Allowed []string
	Err     error
}

// Error returns the message and, when present, the cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithField returns e naming the offending argument.
func (e *Error) WithField(field string) *Error { e.Field = field; return e }

// WithAllowed returns e listing what is allowed.
func (e *Error) WithAllowed(allowed ...string) *Error { e.Allowed = allowed; return e }

// WithCause returns e wrapping a cause that stays on the server.
func (e *Error) WithCause(err error) *Error { e.Err = err; return e }

// ErrorCode returns the code of the first *Error in err's chain, Internal for
// any other non-nil error and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// AsError returns the first *Error in err's chain, or an Internal error that
// wraps err and says nothing of it to the client.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: "internal error", Err: err}
}

// IsNotFound reports whether err is a NotFound error.
func IsNotFound(err error) bool { return ErrorCode(err) == NotFound }
