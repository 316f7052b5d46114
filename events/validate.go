package events

import (
	"fmt"
	"regexp"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// FieldError names the field of an event that is wrong. It is always
// wrapped as a permanent error: retrying a malformed event cannot help.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

func fieldErr(field, reason string) error {
	return &FieldError{Field: field, Reason: reason}
}

// Validator is implemented by every event data type.
type Validator interface {
	Validate() error
}

var digestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// ValidDigest reports whether d is a sha256 content digest.
func ValidDigest(d string) bool { return digestRE.MatchString(d) }

func validateDigest(field, d string) error {
	if d != "" && !ValidDigest(d) {
		return fieldErr(field, fmt.Sprintf("%q is not a sha256:<64 hex> digest", d))
	}
	return nil
}

func permanent(typ string, err error) error {
	return settle.Permanent(fmt.Errorf("event %s: %w", typ, err))
}
