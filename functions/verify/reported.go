package verify

import (
	cloudevents "github.com/cloudevents/sdk-go/v2"
	"k8s.io/utils/lru"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// maxReported bounds the outcome ids a process remembers: about 100 bytes
// each; one evicted costs at most a duplicate for the stream to drop.
const maxReported = 16384

// reported are the outcomes this process has returned, by event id: the
// input whose delivery returned each, and whether the runner has
// confirmed it on the stream (Published). A delivery whose decision,
// re-derived from the pod and the rollout record, ends in an outcome
// already there (the timer's, after a pod.updated reported the landing; a
// pod.updated after the timer's) settles without it instead of publishing
// it again for the stream to drop. A pod.updated, a wake-up only, settles
// so too while another input's delivery is still publishing that outcome;
// the timer waits for the confirmation, and the returning delivery's own
// retry is never skipped. It is a cache, not a record: lost (a restart)
// or evicted, the outcome goes out again under its id and the stream's
// dedup window drops it; an outcome whose publish failed was never
// confirmed, so the delivery's retry, or the timer, still reports it.
type reported struct{ ids *lru.Cache }

// sent is what reported holds of one outcome.
type sent struct {
	// by is the id of the input whose delivery returned it.
	by        string
	confirmed bool
}

func newReported() reported { return reported{ids: lru.New(maxReported)} }

// skip: s need not return the outcome id.
func (r reported) skip(id string, s *step) bool {
	v, ok := r.ids.Get(id)
	if !ok {
		return false
	}
	rep := v.(sent)
	return rep.confirmed || (!s.timer && rep.by != s.in.ID())
}

// ended: this process has confirmed on the stream that plan's upgrade
// succeeded or was rolled back (a failure's id is the one a report of the
// pod gone would have: skip drops that already).
func (r reported) ended(plan events.Plan) bool {
	for _, typ := range []string{events.UpgradeSucceeded, events.UpgradeRolledBack} {
		if v, ok := r.ids.Get(inplace.StepID(plan, typ)); ok && v.(sent).confirmed {
			return true
		}
	}
	return false
}

// returning notes that s's delivery returns the outcome id.
func (r reported) returning(id string, s *step) {
	if v, ok := r.ids.Get(id); ok && v.(sent).confirmed {
		return
	}
	r.ids.Add(id, sent{by: s.in.ID()})
}

// Published implements runner.Confirmed: outs are on the stream.
func (f *Function) Published(in cloudevents.Event, outs []cloudevents.Event) {
	for _, e := range outs {
		switch e.Type() {
		case events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack:
			f.reported.ids.Add(e.ID(), sent{by: in.ID(), confirmed: true})
		}
	}
}
