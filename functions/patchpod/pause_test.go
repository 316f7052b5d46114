package patchpod

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// TestPauseKeepsWorkersFree: a delivery waits in-process only for the
// watch or a short timer, and only in a free waiting slot; a long timer
// (a grace) is the bus's, and a watch wait with every slot taken polls.
// None of these cases waits: the test's context has no time for a timer.
func TestPauseKeepsWorkersFree(t *testing.T) {
	f := New(Deps{Changes: &notify.Keys{}, Waiters: 1})
	woken := make(chan struct{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	grace := settle.NotYet(5*time.Second, "grace")
	if f.pause(ctx, woken, grace) {
		t.Error("waited in-process for a 5s grace")
	}
	if _, d := settle.Classify(grace); d != 5*time.Second {
		t.Errorf("grace's delay became %s", d)
	}

	f.waiters <- struct{}{} // every slot taken
	drain := onWatch(settle.NotYet(time.Hour, "leaving service"))
	if f.pause(ctx, woken, drain) {
		t.Error("waited with every slot taken")
	}
	if _, d := settle.Classify(drain); d != poll {
		t.Errorf("a watch wait without a slot answers not yet in %s, want the %s poll", d, poll)
	}
	<-f.waiters

	close(woken)
	if !f.pause(ctx, woken, onWatch(settle.NotYet(time.Hour, "leaving service"))) {
		t.Error("a woken delivery does not decide again")
	}
	if f.pause(ctx, woken, errors.New("boom")) {
		t.Error("waited after an error that is not a not-yet")
	}
}
