package faults

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// TestSIGKILL kills a separate `inplace run` process at random points of
// a rollout, at least minKills times in a row and once during each template
// sync, then lets a last process finish: every pod moves exactly once and
// each rollout completes exactly once. A rollout that finishes before the
// kills are done is followed by the next push, and the kills go on.
func TestSIGKILL(t *testing.T) {
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			e := newEnv(t, 1)
			e.startChild()
			// One pod at a time with a second of grace: the kills land all
			// along the rollout, not only in its template sync.
			e.deploy(int32(pods), map[string]string{"inplace.dev/max-unavailable": "1", "inplace.dev/grace-seconds": "1"})
			base := e.pods()
			kills, syncKills := 0, 0
			var ps []pushed
			e.killedAt = nil
			for minor := 1; kills < minKills || syncKills == 0; minor++ {
				if minor > 8 {
					t.Fatalf("%d kills (%d in template syncs) over %d rollouts; the rollouts end too fast", kills, syncKills, len(ps))
				}
				p := e.push(fmt.Sprintf("1.%d.0", minor))
				ps = append(ps, p)
				k, s := e.killDuring(p)
				kills, syncKills = kills+k, syncKills+s
			}
			if e.child == nil {
				e.startChild()
			}
			// Every push but the last was seen Completed by killDuring; the
			// record holds the latest rollout only, so only the last is
			// waited for here.
			e.done(ps[len(ps)-1], 3*time.Minute)
			t.Logf("%d kills in a row (%d during a template sync) over %d rollouts, at: %v", kills, syncKills, len(ps), e.killedAt)
			record(t, "SIGKILL of inplace run", "kills", len(ps), kills, pods*len(ps), e.check(base, ps))
		})
	}
}

// killDuring kills the child again and again while p's rollout runs: after
// a random time, or at once when the template sync starts. During the
// sync it kills once at each step: a step that has not moved since its
// kill is left to move (its input comes back after the bus's AckWait, and
// killing it again there only adds kills where one was already made). It
// returns the kills, and those during a sync.
func (e *env) killDuring(p pushed) (kills, syncKills int) {
	e.t.Helper()
	syncKilled := map[string]bool{}
	var stuck time.Time
	for {
		if e.child == nil {
			e.startChild()
		}
		life := time.Duration(300+e.rng.IntN(2200)) * time.Millisecond
		phase, where := e.watchFor(p, life, len(syncKilled) == 0)
		if phase == rollout.Completed {
			return kills, syncKills
		}
		if phase == rollout.Syncing && syncKilled[where] {
			if stuck.IsZero() {
				stuck = time.Now()
			}
			if time.Since(stuck) > 2*time.Minute {
				e.t.Fatalf("template sync at %s for %s since its kill\n%s", where, time.Since(stuck).Round(time.Second), e.logs())
			}
			continue
		}
		stuck = time.Time{}
		e.kill()
		kills++
		e.killedAt = append(e.killedAt, where)
		if phase == rollout.Syncing {
			syncKilled[where] = true
			syncKills++
		}
	}
}

// watchFor watches the rollout for up to life: it returns early when it
// completes or (if stopAtSync) when its template sync starts, and returns
// the phase then and where the rollout stood ("Running 2/4", "Syncing frozen").
func (e *env) watchFor(p pushed, life time.Duration, stopAtSync bool) (rollout.Phase, string) {
	ctx, cancel := context.WithTimeout(e.t.Context(), life)
	defer cancel()
	var phase rollout.Phase
	where := "starting"
	for {
		if r := e.state(ctx); r != nil && r.UpgradeID == p.upgradeID {
			phase, where = r.Phase, stage(r)
			if phase == rollout.Completed || (stopAtSync && phase == rollout.Syncing) {
				return phase, where
			}
		}
		select {
		case <-ctx.Done():
			return phase, where
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// stage says where a rollout stands: pods done and in flight, or the
// template sync's step.
func stage(r *rollout.Rollout) string {
	if r.Phase == rollout.Syncing {
		step := "start"
		if r.Sync != nil && r.Sync.Step != "" {
			step = r.Sync.Step
		}
		return "sync:" + step
	}
	c := r.Counts()
	inFlight := 0
	for _, p := range r.Pods {
		if p.State == rollout.InFlight {
			inFlight++
		}
	}
	return fmt.Sprintf("%d/%d+%d", c.Succeeded, c.Pods, inFlight)
}
