package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// RecordChanges tells waiters when a rollout record changes. `inplace
// run` feeds it from a watch of the records' bucket (Notify), so a
// delivery that waits for another worker (a template sync under way) moves
// on at the change itself instead of a fixed recheck.
type RecordChanges struct{ notify.Keys }

// Notify wakes the waiters of key: the watch's callback (the value is not
// read: a waiter reads the record again).
func (c *RecordChanges) Notify(key string, _ []byte) { c.Wake(key) }

// pollRecheck is how soon a wait looks again where nothing watches
// (Knative mode: no RecordChanges, no Waker).
const pollRecheck = 2 * time.Second

// maxRecordWait bounds one wait for a record's change within a delivery
// (and half of what is left of its deadline).
const maxRecordWait = 20 * time.Second

// Recheck is how soon a waiting delivery looks again by itself: with the
// watches, a long safety net (stallRecheck); without, pollRecheck.
func (ctl *Rollouts) Recheck() time.Duration {
	if ctl.d.Records != nil {
		return stallRecheck
	}
	return pollRecheck
}

// recordChanged is Records.Changed, or a channel that never closes.
func (ctl *Rollouts) recordChanged(key string) (<-chan struct{}, func()) {
	if ctl.d.Records == nil {
		return nil, func() {}
	}
	return ctl.d.Records.Changed(key)
}

// ErrRecordBusy: the workload's record holds a rollout that must end (or
// sync its template) first; the request waits for the record to change.
var ErrRecordBusy = errors.New("the workload's rollout record is busy")

// WhenRecordFree runs try, and again at each change of the record key
// (the watch of the records) while it answers ErrRecordBusy, within
// maxRecordWait per wait; then try's answer (a "not yet" for the bus, its
// safety net) goes back as it is. No fixed delay: the request moves at the
// record's change itself.
func (ctl *Rollouts) WhenRecordFree(ctx context.Context, key string, try func() ([]cloudevents.Event, error)) ([]cloudevents.Event, error) {
	for {
		woken, stop := ctl.recordChanged(key)
		outs, err := try()
		if !errors.Is(err, ErrRecordBusy) || !notify.Wait(ctx, woken, maxRecordWait) {
			stop()
			return outs, err
		}
		stop()
	}
}

// BeginRequest writes a restart's or resize's rollout (what, id) into the
// workload's record: begin builds it from the previous record and plans
// its first pods; a begin error means another rollout holds the record
// (ErrRecordBusy: WhenRecordFree waits for its change).
func (ctl *Rollouts) BeginRequest(ctx context.Context, ref events.ObjectRef, what, id string,
	begin func(prev *rollout.Rollout) (*rollout.Rollout, []*rollout.Pod, error)) (*rollout.Rollout, []*rollout.Pod, error) {
	var r *rollout.Rollout
	var planned []*rollout.Pod
	_, err := ctl.d.Store.Update(ctx, rollout.Key(ref), func(old []byte) ([]byte, error) {
		prev, err := Decode(old)
		if err != nil {
			return nil, err
		}
		if r, planned, err = begin(prev); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRecordBusy, settle.NotYet(ctl.Recheck(), "%s: %s %s waits: %v", ref, what, id, err))
		}
		return json.Marshal(r)
	})
	return r, planned, err
}

// Decode is a rollout record read from the store (nil: there is none).
func Decode(raw []byte) (*rollout.Rollout, error) {
	if raw == nil {
		return nil, nil
	}
	var r rollout.Rollout
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, wrap("decode rollout state", err)
	}
	return &r, nil
}
