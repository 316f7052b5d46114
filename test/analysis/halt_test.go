package analysis

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// With Prometheus unreachable, a good version is never promoted: the
// canary's measurements fail, the step is inconclusive, the rollout halts
// with AnalysisInconclusive, no analysis passes, and no pod but the canary
// moved.
func TestUnreachablePrometheusNeverPromotes(t *testing.T) {
	e := newEnv(t, "http://127.0.0.1:1")
	e.startChild()
	e.deploy(replicas, canarySpec("5s"))
	base := e.pods()

	p := e.push("1.1.0")
	halted := e.waitEvent(p, events.RolloutHalted, 3*time.Minute)
	var d events.RolloutData
	if err := json.Unmarshal(halted.Data(), &d); err != nil {
		t.Fatal(err)
	}
	t.Logf("rollout.halted: %s: %s", d.Reason, d.Message)
	if d.Reason != events.ReasonAnalysisInconclusive {
		t.Errorf("halt reason %q, want %s", d.Reason, events.ReasonAnalysisInconclusive)
	}
	if n := len(e.stream(events.RolloutAnalysisPassed, events.RolloutCompleted)); n != 0 {
		t.Errorf("%d rollout.analysis.passed / rollout.completed events; want none", n)
	}
	moved := 0
	for name, now := range e.pods() {
		b := base[name]
		if now.UID != b.UID {
			t.Errorf("%s: UID %s, was %s", name, now.UID, b.UID)
		}
		if now.RestartCount != b.RestartCount || now.ImageID != b.ImageID {
			moved++
		}
	}
	if moved > 1 {
		t.Errorf("%d pods moved; want at most the canary", moved)
	}
	if r := e.state(t.Context()); r == nil || r.Phase != rollout.Halted {
		t.Errorf("record: %s; want Halted", describe(r))
	}
}

// A SIGKILL of `inplace run` during the bake resumes the analysis: a new
// process takes the step up from the record (its start unchanged, the
// canary not moved again), measures, promotes, and the rollout completes
// with every pod moved exactly once and no request failed through the
// Service.
func TestKillDuringBakeResumes(t *testing.T) {
	const bake = 30 * time.Second
	e := newEnv(t, "")
	e.startChild()
	e.deploy(replicas, canarySpec(bake.String()))
	base := e.pods()
	pr := e.probeService()

	p := e.push("1.1.0")
	r := e.waitRecord(p, 3*time.Minute, "the canary baking", func(r *rollout.Rollout) bool {
		return r.Analysis != nil && r.Analysis.Step == 0 && !r.Analysis.StepStartedAt.IsZero()
	})
	started := r.Analysis.StepStartedAt
	e.kill()
	if left := time.Until(started.Add(bake)); left <= 0 {
		t.Fatalf("killed %s after the bake ended; want during it", -left)
	}
	e.startChild()
	r = e.waitRecord(p, 3*time.Minute, "rollout completed", func(r *rollout.Rollout) bool {
		return r.Phase == rollout.Completed || r.Phase == rollout.Halted
	})
	if r.Phase != rollout.Completed {
		t.Fatalf("rollout %s%s", describe(r), e.logs())
	}
	if a := r.Analysis; a == nil || len(a.Verdicts) == 0 || !a.Verdicts[0].StartedAt.Equal(started) {
		t.Errorf("analysis %s; want the first step's verdict started at %s (the bake resumed, not restarted)", describe(r), started)
	}
	for name, now := range e.pods() {
		b := base[name]
		if now.UID != b.UID || now.RestartCount != b.RestartCount+1 {
			t.Errorf("%s: %+v, was %+v; want the same pod restarted once", name, now, b)
		}
	}
	e.noFailures(pr)
}
