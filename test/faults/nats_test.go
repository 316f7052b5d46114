package faults

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/world"
)

// TestNATSRestart restarts the nats-server (file storage) in the middle of
// a rollout, twice: once while pods are in flight, once during the
// template sync. The stream, its consumers and the rollout record survive
// on disk; the process reconnects and the rollout ends as if nothing had
// happened.
func TestNATSRestart(t *testing.T) {
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			e := newEnv(t, 1)
			e.startChild()
			e.deploy(int32(pods), map[string]string{"inplace.dev/max-unavailable": "1", "inplace.dev/grace-seconds": "1"})
			base := e.pods()
			p := e.push("1.1.0")
			restarts := 0
			e.waitPhase(p, 2*time.Minute, func(r *rollout.Rollout) bool { return r.Counts().Succeeded >= 1 }, "a first pod upgraded")
			e.restartNATS(0)
			restarts++
			if e.reachSync(p) {
				e.restartNATS(0)
				restarts++
			}
			e.done(p, 3*time.Minute)
			record(t, "nats-server restarted mid-rollout", "restarts", 1, restarts, pods, e.check(base, []pushed{p}))
		})
	}
}

// TestStreamLeaderLoss runs the rollout on a 3-node JetStream cluster with
// R3 streams and KV, and kills the node leading the stream mid-rollout; it
// comes back a few seconds later. The other two elect a new leader and the
// rollout goes on.
func TestStreamLeaderLoss(t *testing.T) {
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			e := newEnv(t, 3)
			e.startChild()
			e.deploy(int32(pods), map[string]string{"inplace.dev/max-unavailable": "1", "inplace.dev/grace-seconds": "1"})
			base := e.pods()
			p := e.push("1.1.0")
			e.waitPhase(p, 2*time.Minute, func(r *rollout.Rollout) bool { return r.Counts().Succeeded >= 1 }, "a first pod upgraded")
			leader, err := streamLeader(t.Context(), e.b.JetStream(), e.cfg.Stream)
			if err != nil {
				t.Fatal(err)
			}
			i := e.nats.Index(leader)
			e.nats.Stop(i)
			t.Logf("stopped the stream leader %s", leader)
			err = world.Eventually(t.Context(), time.Minute, "a new stream leader", func(ctx context.Context) (bool, error) {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // a request may hang while the cluster elects
				defer cancel()
				l, err := streamLeader(ctx, e.b.JetStream(), e.cfg.Stream)
				return err == nil && l != "" && l != leader, nil
			})
			if err != nil {
				t.Fatalf("%v%s", err, e.logs())
			}
			var upgraded int
			e.waitPhase(p, time.Minute, func(r *rollout.Rollout) bool { upgraded = r.Counts().Succeeded; return true },
				"the rollout record, read from the two nodes left")
			e.waitPhase(p, 2*time.Minute, func(r *rollout.Rollout) bool {
				return r.Counts().Succeeded > upgraded || r.Phase == rollout.Completed || r.Phase == rollout.Halted
			}, "a pod upgraded on the two nodes left")
			e.nats.Start(i)
			e.done(p, 3*time.Minute)
			record(t, "JetStream cluster (R3) losing its stream leader", "leader losses", 1, 1, pods, e.check(base, []pushed{p}))
		})
	}
}

// restartNATS stops server i and starts it again on the same port and store.
func (e *env) restartNATS(i int) {
	e.t.Helper()
	e.nats.Stop(i)
	// The sleep is the point: the process must find the server gone (its
	// connection drops, publishes and KV writes fail) before it returns.
	time.Sleep(time.Second)
	e.nats.Start(i)
	e.t.Logf("restarted nats %d", i)
}

// reachSync waits for p's template sync to start; false when the rollout
// completed first.
func (e *env) reachSync(p pushed) bool {
	e.t.Helper()
	var phase rollout.Phase
	e.waitPhase(p, 3*time.Minute, func(r *rollout.Rollout) bool {
		phase = r.Phase
		return phase == rollout.Syncing || phase == rollout.Completed
	}, "the template sync")
	return phase == rollout.Syncing
}
