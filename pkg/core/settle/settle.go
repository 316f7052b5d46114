package settle

import (
	"errors"
	"fmt"
	"time"
)

// Kind is the settlement of one input event.
type Kind int

const (
	// Done: the handler succeeded; outputs are published, then the input is acked.
	Done Kind = iota
	// Retry: a transient failure; the input is redelivered with backoff.
	Retry
	// Later: nothing is wrong but the world is not ready yet (a grace period,
	// the kubelet); the input is redelivered after the error's delay.
	Later
	// Fail: the input can never succeed; it is terminated and copied to the
	// dead-letter subject with the reason.
	Fail
)

func (k Kind) String() string {
	switch k {
	case Done:
		return "ack"
	case Retry:
		return "retry"
	case Later:
		return "later"
	case Fail:
		return "dead-letter"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ErrPermanent is matched by errors.Is for every error made by Permanent.
var ErrPermanent = errors.New("permanent")

type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

// Permanent marks err as one that retrying cannot fix (malformed input, a
// precondition that will never hold). A nil err stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// Permanentf is Permanent(fmt.Errorf(format, args...)).
func Permanentf(format string, args ...any) error {
	return Permanent(fmt.Errorf(format, args...))
}

// NotYetError asks for the input to be delivered again after Delay.
type NotYetError struct {
	Delay  time.Duration
	Reason string
}

func (e *NotYetError) Error() string {
	return fmt.Sprintf("not yet (again in %s): %s", e.Delay, e.Reason)
}

// NotYet returns an error that redelivers the input after delay. It is not a
// failure: metrics and logs count it apart from errors.
func NotYet(delay time.Duration, format string, args ...any) error {
	if delay <= 0 {
		delay = time.Second
	}
	return &NotYetError{Delay: delay, Reason: fmt.Sprintf(format, args...)}
}

// Classify returns the settlement for a handler's error and, for Later, the
// delay to wait before redelivery.
func Classify(err error) (Kind, time.Duration) {
	if err == nil {
		return Done, 0
	}
	var ny *NotYetError
	if errors.As(err, &ny) {
		return Later, ny.Delay
	}
	if errors.Is(err, ErrPermanent) {
		return Fail, 0
	}
	return Retry, 0
}
