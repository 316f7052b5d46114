package analysis

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/traffic"
)

const replicas = 3

// failing is a version that stays Ready but answers 10% of its requests
// with 500.
func failing() registry.PushOption {
	return registry.WithEnv(settings.AppPrefix + settings.ErrorRateVar + "=0.1")
}

// probeEach starts a traffic probe calling each pod by its IP, and waits
// until every probe has had answers.
func (e *env) probeEach(pods map[string]podInfo) map[string]*traffic.Probe {
	e.t.Helper()
	out := map[string]*traffic.Probe{}
	i := 0
	for name, p := range pods {
		i++
		pr, err := traffic.Start(e.t.Context(), e.w.Client(), e.ns, "http://"+p.IP+":8080/",
			traffic.Options{Registry: e.w.Registry, Name: "probe-" + string(rune('a'+i-1))})
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := pr.Wait(e.t.Context(), time.Minute, "answers from "+name, func(c traffic.Counts) bool { return c.OK >= 50 }); err != nil {
			e.t.Fatal(err)
		}
		out[name] = pr
	}
	return out
}

// A version that stays Ready but fails 10% of its requests is rolled back
// after the canary wave: the canary pod runs the old image again, every
// other pod is untouched (same UID, image, imageID, restart count), the
// rollout halts with AnalysisFailed naming the query and the value, and the
// probes of the other pods count no failed request.
func TestFailingCanaryIsRolledBack(t *testing.T) {
	e := newEnv(t, "")
	e.startChild()
	e.deploy(replicas, canarySpec("15s"))
	base := e.pods()
	probes := e.probeEach(base)

	p := e.push("1.1.0", failing())
	halted := e.waitEvent(p, events.RolloutHalted, 4*time.Minute)
	var d events.RolloutData
	if err := json.Unmarshal(halted.Data(), &d); err != nil {
		t.Fatal(err)
	}
	t.Logf("rollout.halted: %s: %s", d.Reason, d.Message)
	if d.Reason != events.ReasonAnalysisFailed {
		t.Errorf("halt reason %q, want %s", d.Reason, events.ReasonAnalysisFailed)
	}
	if !regexp.MustCompile(`error-ratio: 0\.[0-9]+, want < 0\.05`).MatchString(d.Message) {
		t.Errorf("halt message %q: want the query, its value and the threshold", d.Message)
	}

	// The canary pod goes back to 1.0.0 in place; the others never moved.
	var canary string
	e.waitPods(3*time.Minute, "the canary back on 1.0.0, the others untouched", func(now map[string]podInfo) bool {
		canary = ""
		for name, b := range base {
			n, ok := now[name]
			if !ok || n.UID != b.UID || n.ImageID != b.ImageID || !n.Ready {
				return false
			}
			if n.RestartCount == b.RestartCount && n.Image == b.Image {
				continue
			}
			// The canary: patched and patched back (its image may be
			// written pinned to the digest it ran).
			if canary != "" || n.RestartCount < b.RestartCount+2 {
				return false
			}
			canary = name
		}
		return canary != "" && len(now) == len(base)
	})
	if r := e.state(t.Context()); r != nil {
		t.Logf("record: %s", describe(r))
	}
	for name, pr := range probes {
		c, err := pr.Stop(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("probe of %s: sent %d, failed %d (5xx %d), versions %v", name, c.Sent, c.Failed, c.ServerError, c.Versions)
		if name != canary && c.Failed != 0 {
			t.Errorf("%s (not the canary): %d of %d requests failed: %+v", name, c.Failed, c.Sent, c.Samples)
		}
		if name == canary && c.ServerError == 0 {
			t.Errorf("the canary %s answered no 500: the failing version never ran", name)
		}
	}
}

// A good version is promoted through every wave: the canary passes its
// analysis (rollout.analysis.passed), then the remaining pods move one at
// a time, every pod keeps its UID, and a probe through the Service counts
// no failed request.
func TestGoodCanaryIsPromoted(t *testing.T) {
	e := newEnv(t, "")
	e.startChild()
	e.deploy(replicas, canarySpec("15s"))
	base := e.pods()
	pr := e.probeService()

	p := e.push("1.1.0")
	passed := e.waitEvent(p, events.RolloutAnalysisPassed, 3*time.Minute)
	t.Logf("rollout.analysis.passed: %s", passed.Data())
	r := e.waitRecord(p, 3*time.Minute, "rollout completed", func(r *rollout.Rollout) bool {
		return r.Phase == rollout.Completed || r.Phase == rollout.Halted
	})
	if r.Phase != rollout.Completed {
		t.Fatalf("rollout %s: %s%s", r.Phase, describe(r), e.logs())
	}
	waves := map[int]int{}
	for _, pod := range r.Pods {
		waves[pod.Wave]++
	}
	if len(waves) != replicas {
		t.Errorf("waves %v: want %d waves of one pod (the canary, then one at a time)", waves, replicas)
	}
	now := e.pods()
	for name, b := range base {
		n := now[name]
		if n.UID != b.UID || !strings.Contains(n.ImageID, p.digest) {
			t.Errorf("%s: %+v, was %+v; want the same pod on 1.1.0", name, n, b)
		}
	}
	e.noFailures(pr)
}

// probeService starts a traffic probe calling web through its Service and
// waits until it answers steadily (kube-proxy has programmed the Service on
// the probe's node): noFailures counts from there.
func (e *env) probeService() *traffic.Probe {
	e.t.Helper()
	pr, err := traffic.Start(e.t.Context(), e.w.Client(), e.ns, "http://web."+e.ns+".svc.cluster.local:8080/",
		traffic.Options{Registry: e.w.Registry})
	if err != nil {
		e.t.Fatal(err)
	}
	opened, err := pr.Steady(e.t.Context(), time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := pr.Wait(e.t.Context(), time.Minute, "answers through the Service", func(c traffic.Counts) bool { return c.OK >= opened.OK+50 }); err != nil {
		e.t.Fatal(err)
	}
	e.opened = opened
	if e.rec, err = traffic.Record(e.t.Context(), e.w.Client(), e.ns, "app=web"); err != nil {
		e.t.Fatal(err)
	}
	return pr
}

func (e *env) noFailures(pr *traffic.Probe) {
	e.t.Helper()
	final, err := pr.Stop(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	if e.opened.Failed != 0 {
		e.t.Logf("before the Service answered steadily (not counted): %d of %d requests failed: %+v", e.opened.Failed, e.opened.Sent, e.opened.Samples)
	}
	c := final.Sub(e.opened)
	e.t.Logf("probe through the Service: sent %d, failed %d, versions %v", c.Sent, c.Failed, c.Versions)
	if c.Failed != 0 {
		e.t.Errorf("%d of %d requests failed (refused %d, reset %d, timeout %d, 5xx %d): %+v%s",
			c.Failed, c.Sent, c.Refused, c.Reset, c.Timeout, c.ServerError, c.Samples,
			e.rec.Explain(e.t.Context(), c.Samples, 6*time.Second, 2*time.Second, e.w.NodeLogs()...))
	}
}
