package verify

import (
	"k8s.io/utils/lru"

	"github.com/inplace-dev/inplace/pkg/kube"
)

// maxLooked bounds the pods whose last look a process remembers.
const maxLooked = 16384

// looked is, by pod UID, the resourceVersion of the pod the last
// pod.updated decision read that had nothing to do (no output, no error:
// the kubelet is still at work): a pod.updated is a wake-up ("look at
// this pod again"), and one whose pod is no newer than what such a
// decision has read since is answered already, however many pile up for
// one pod while a decision runs. Only pod.updated decisions count (their
// plan is the pod's own state's), and only those settled for good: one
// that reported an outcome or failed, or answered "not yet", is delivered
// again when its publish or its wait needs it, and looks again then. The
// timer is never skipped. A cache: lost or evicted, a pod.updated is
// looked at once more.
type looked struct{ rvs *lru.Cache }

func newLooked() looked { return looked{rvs: lru.New(maxLooked)} }

// answered: a settled decision has read the pod at or past s's
// resourceVersion.
func (l looked) answered(s *step) bool {
	if s.timer || s.seenRV == "" || s.ref.UID == "" {
		return false
	}
	rv, ok := l.rvs.Get(s.ref.UID)
	return ok && !kube.OlderThan(rv.(string), s.seenRV)
}

// note records what a pod.updated's decision read when it had nothing
// to do.
func (l looked) note(s *step, outs int, err error) {
	if s.timer || s.readRV == "" || outs > 0 || err != nil {
		return
	}
	if rv, ok := l.rvs.Get(s.ref.UID); ok && kube.OlderThan(s.readRV, rv.(string)) {
		return
	}
	l.rvs.Add(s.ref.UID, s.readRV)
}
