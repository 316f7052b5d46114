package probe

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
)

// outcome is how one request ended.
type outcome int

const (
	ok outcome = iota
	refused
	reset
	timeout
	serverError
	other
)

// classify says how a request ended from its error or, without one, its
// status code.
func classify(err error, code int) outcome {
	switch {
	case err == nil && code >= 200 && code < 300:
		return ok
	case err == nil && code >= 500:
		return serverError
	case err == nil:
		return other
	case errors.Is(err, syscall.ECONNREFUSED):
		return refused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return reset
	case isTimeout(err):
		return timeout
	}
	return other
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, http.ErrHandlerTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
