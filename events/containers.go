package events

import (
	"fmt"
	"slices"
)

// MaxRestartContainers bounds the containers one request names.
const MaxRestartContainers = 32

// validateRequest checks what every request on containers of a workload
// carries (container.restart.requested, container.resize.requested): the
// target, at least one container, and a reason short enough for an Event.
func validateRequest(target ObjectRef, containers []string, reason string) error {
	if err := target.validate("data.target"); err != nil {
		return err
	}
	if len(containers) == 0 {
		return fieldErr("data.containers", "name at least one container")
	}
	if err := validateContainers(containers); err != nil {
		return err
	}
	if len(reason) > 256 {
		return fieldErr("data.reason", "at most 256 characters")
	}
	return nil
}

// validateContainers: at most MaxRestartContainers names, none empty or
// named twice.
func validateContainers(names []string) error {
	if len(names) > MaxRestartContainers {
		return fieldErr("data.containers", fmt.Sprintf("at most %d containers", MaxRestartContainers))
	}
	for i, c := range names {
		if c == "" || slices.Contains(names[:i], c) {
			return fieldErr(fmt.Sprintf("data.containers[%d]", i), "empty or named twice")
		}
	}
	return nil
}

// validateResult checks what every request's result carries.
func validateResult(requestID string, target ObjectRef) error {
	if requestID == "" {
		return fieldErr("data.requestID", "required")
	}
	return target.validate("data.target")
}
