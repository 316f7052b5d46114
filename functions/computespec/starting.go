package computespec

import (
	"fmt"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// maxClockSkew is how far ahead of this process's clock a request's time
// may be and still count as its start (a producer's clock).
const maxClockSkew = time.Minute

// nothingYet answers a restart or resize request (what) none of whose
// candidates can be planned now. When that is because containers are not
// running (yet), as the cache shows them, or because the cache shows none
// of the pods the workload wants (a pod starting, or its change not yet in
// the cache: the request can overtake the watch), the request waits for
// the pods' change: controller.ErrRecordBusy, so WhenRecordFree looks
// again when the Waker sees a container start or a pod become Ready, and
// the bus's "not yet" stays the safety net. It waits until deadline after the request's
// time (durable: the event's own), then is refused like any other, so
// every request ends.
func (f *Function) nothingYet(t controller.Target, what string, target events.ObjectRef, containers []string,
	cands []rollout.Candidate, asked time.Time, deadline time.Duration) error {
	why := "nothing to " + what + ": " + planner.Skipped(cands)
	if !starting(cands, t.Workload.Replicas) {
		return f.refuseRequest(t, what, target, containers, why)
	}
	now := f.d.Now()
	if asked.IsZero() || asked.After(now.Add(maxClockSkew)) || now.Sub(asked) >= deadline {
		return f.refuseRequest(t, what, target, containers, fmt.Sprintf("%s (still so %s after the request)", why, deadline))
	}
	return fmt.Errorf("%w: %w", controller.ErrRecordBusy, settle.NotYet(f.ro.Recheck(), "%s: %s waits for its containers to run: %s", target, what, why))
}

// starting: nothing can be planned only for a passing reason — a named
// container is not running, or the workload wants pods the cache does not
// show.
func starting(cands []rollout.Candidate, wants int) bool {
	if len(cands) == 0 {
		return wants > 0
	}
	for _, c := range cands {
		for _, skip := range strings.Split(c.Why, "; ") {
			if strings.HasSuffix(skip, ": "+inplace.SkipNotRunning) {
				return true
			}
		}
	}
	return false
}

// seconds is n seconds.
func seconds(n int) time.Duration { return time.Duration(n) * time.Second }
