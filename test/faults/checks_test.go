package faults

import (
	"context"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// check verifies the end state after the rollouts ps, in order, of the
// pods base, and returns how many things it found wrong (each is also a
// test error).
func (e *env) check(base map[string]podInfo, ps []pushed) int {
	e.t.Helper()
	lost := 0
	bad := func(format string, args ...any) {
		e.t.Helper()
		lost++
		e.t.Errorf(format, args...)
	}
	last := ps[len(ps)-1]
	ctx := e.t.Context()
	err := world.Eventually(ctx, 2*time.Minute, "every pod Ready on "+last.image, func(ctx context.Context) (bool, error) {
		list, err := client(e).CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(list.Items) != len(base) {
			return false, err
		}
		for _, p := range list.Items {
			cs := world.ContainerStatus(&p, "app")
			if p.Spec.Containers[0].Image != last.image || cs == nil || imageref.DigestOf(cs.ImageID) != last.digest || !world.PodReady(&p) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		bad("%v", err)
	}
	list, err := client(e).CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range list.Items {
		seen[p.Name] = true
		lost += e.checkPod(&p, base[p.Name], len(ps), last)
	}
	for name := range base {
		if !seen[name] {
			bad("pod %s is gone", name)
		}
	}
	lost += e.checkDeployment(last)
	lost += e.checkNoPrepullPod()
	for _, p := range ps {
		lost += e.checkCompletion(p, len(base))
	}
	return lost
}

// checkPod: the same pod (UID), on the target, exactly one restart per
// rollout, its gate True.
func (e *env) checkPod(p *corev1.Pod, was podInfo, rollouts int, last pushed) int {
	e.t.Helper()
	lost := 0
	bad := func(format string, args ...any) {
		e.t.Helper()
		lost++
		e.t.Errorf("pod %s: "+format, append([]any{p.Name}, args...)...)
	}
	cs := world.ContainerStatus(p, "app")
	switch {
	case was.UID == "":
		bad("is new (uid %s): a pod was replaced", p.UID)
	case string(p.UID) != was.UID:
		bad("uid %s; was %s (recreated)", p.UID, was.UID)
	case cs == nil:
		bad("no container status")
	case cs.RestartCount != was.RestartCount+int32(rollouts):
		bad("restartCount %d; want %d (+1 per rollout)", cs.RestartCount, was.RestartCount+int32(rollouts))
	case p.Spec.Containers[0].Image != last.image:
		bad("image %s; want %s", p.Spec.Containers[0].Image, last.image)
	}
	if s, _ := inplace.GateStatus(p); s != corev1.ConditionTrue {
		bad("readiness gate %s is %q", inplace.ReadinessGate, s)
	}
	return lost
}

// checkDeployment: the template on the target, nothing left paused or
// with a sync record.
func (e *env) checkDeployment(last pushed) int {
	e.t.Helper()
	d, err := client(e).AppsV1().Deployments(e.ns).Get(e.t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	lost := 0
	if d.Spec.Paused {
		lost++
		e.t.Error("the Deployment was left paused")
	}
	if rec := d.Annotations[inplace.SyncAnnotation]; rec != "" {
		lost++
		e.t.Errorf("the sync record was left on the Deployment: %s", rec)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != last.image {
		lost++
		e.t.Errorf("template image %s; want %s", img, last.image)
	}
	return lost
}

// checkNoPrepullPod: every pre-pull pod is deleted (those a crash left
// behind by the sweep).
func (e *env) checkNoPrepullPod() int {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), 3*time.Minute, "no pre-pull pod left", func(ctx context.Context) (bool, error) {
		list, err := client(e).CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: prepull.Selector})
		return err == nil && len(list.Items) == 0, err
	})
	if err != nil {
		e.t.Error(err)
		return 1
	}
	return 0
}

// ended: evs hold a rollout.completed or rollout.halted.
func ended(evs []cloudEvent) bool {
	for _, ev := range evs {
		if ev.Type() == events.RolloutCompleted || ev.Type() == events.RolloutHalted {
			return true
		}
	}
	return false
}

// checkCompletion: exactly one rollout.completed for the rollout, with
// true counts and the template synced, and no rollout.halted.
func (e *env) checkCompletion(p pushed, n int) int {
	e.t.Helper()
	// On a JetStream cluster a fresh ordered consumer may not answer its
	// first fetch yet ("no responders"): read again until it does. The
	// record can say Completed before the stream has rollout.completed: a
	// fault between compute-spec's record write and its publish fails the
	// delivery, and its redelivery (after the ack wait) publishes it; so
	// read until the rollout's end is there, within a bound.
	var evs []cloudEvent
	var last error
	err := world.Eventually(e.t.Context(), 3*time.Minute, "the rollout's end read from the stream", func(context.Context) (bool, error) {
		evs, last = e.rolloutEvents(p.upgradeID)
		return last == nil && ended(evs), nil
	})
	if err != nil && last != nil {
		e.t.Fatalf("%v: %v", err, last)
	}
	completed, halted := map[string]events.RolloutData{}, 0
	for _, ev := range evs {
		switch ev.Type() {
		case events.RolloutCompleted:
			d, err := events.As[events.RolloutData](ev)
			if err != nil {
				e.t.Fatal(err)
			}
			completed[ev.ID()] = d
		case events.RolloutHalted:
			halted++
			if d, err := events.As[events.RolloutData](ev); err == nil {
				e.t.Logf("rollout.halted: %s: %s", d.Reason, d.Message)
			}
		}
	}
	lost := 0
	if len(completed) != 1 || halted != 0 {
		lost++
		e.t.Errorf("rollout %s: %d rollout.completed and %d rollout.halted; want exactly one completion", p.upgradeID, len(completed), halted)
	}
	want := events.Counts{Pods: n, Succeeded: n}
	for _, d := range completed {
		if d.Counts != want || !d.TemplateSynced {
			lost++
			e.t.Errorf("rollout %s completed with counts %+v, template synced %v; want %+v and synced", p.upgradeID, d.Counts, d.TemplateSynced, want)
		}
	}
	return lost
}

// rolloutEvents reads the rollout.* events of one upgrade from the stream.
func (e *env) rolloutEvents(upgradeID string) ([]cloudEvent, error) {
	ctx, cancel := context.WithTimeout(e.t.Context(), time.Minute)
	defer cancel()
	c, err := e.b.JetStream().OrderedConsumer(ctx, e.cfg.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{e.cfg.Subject(events.RolloutCompleted), e.cfg.Subject(events.RolloutHalted)}})
	if err != nil {
		return nil, fmt.Errorf("read the stream: %w", err)
	}
	var out []cloudEvent
	for {
		batch, err := c.FetchNoWait(200)
		if err != nil {
			return nil, err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			ev, err := bus.Decode(ctx, m.Subject(), m.Headers(), m.Data())
			if err != nil {
				return nil, err
			}
			if events.UpgradeID(ev) == upgradeID {
				out = append(out, ev)
			}
		}
		if n == 0 {
			return out, batch.Error()
		}
	}
}

type cloudEvent = cloudevents.Event
