package verify

import (
	cloudevents "github.com/cloudevents/sdk-go/v2"
	"k8s.io/utils/lru"

	"github.com/inplace-dev/inplace/events"
)

// maxReported bounds the outcome ids a process remembers: about 100 bytes
// each; one evicted costs at most a duplicate for the stream to drop.
const maxReported = 16384

// reported are the outcomes this process has put on the stream, by event
// id: the runner confirms each (Published) once JetStream has it. A
// delivery whose decision, re-derived from the pod and the rollout record,
// ends in an outcome already there (the timer's, after a pod.updated
// reported the landing; a pod.updated after the timer's) settles without
// it instead of publishing it again for the stream to drop. It is a
// cache, not a record: lost (a restart) or evicted, the outcome goes out
// again under its id and the stream's dedup window drops it; an outcome
// whose publish failed was never confirmed, so the delivery's retry, or
// the timer, still reports it.
type reported struct{ ids *lru.Cache }

func newReported() reported { return reported{ids: lru.New(maxReported)} }

func (r reported) has(id string) bool {
	_, ok := r.ids.Get(id)
	return ok
}

// Published implements runner.Confirmed: outs are on the stream.
func (f *Function) Published(_ cloudevents.Event, outs []cloudevents.Event) {
	for _, e := range outs {
		switch e.Type() {
		case events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack:
			f.reported.ids.Add(e.ID(), nil)
		}
	}
}
