// Package historytest builds the events a real rollout puts on the stream,
// with the ids, upgrade ids and trace context the chain's functions would
// give them, so the operator's tools can be tested on a realistic history.
// It is for tests only.
package historytest

import (
	"context"
	"fmt"
	"sort"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
)

// Pod is one pod of a rollout and how its upgrade ends.
type Pod struct {
	Name, UID, Node string
	Wave            int
	// Outcome is events.OutcomeSucceeded (the default), OutcomeRolledBack
	// or OutcomeFailed; Reason and Message go with a failure.
	Outcome, Reason, Message string
}

// Rollout is one workload's rollout of one push.
type Rollout struct {
	Push     events.ImagePushedData
	Workload events.ObjectRef
	Pods     []Pod
	// Start is the time of the push; each later event is Step after the one before.
	Start time.Time
	Step  time.Duration
}

// PushEvent is the image.pushed the receiver publishes.
func (r Rollout) PushEvent() (cloudevents.Event, error) {
	return events.New(events.PushID(r.Push), events.ImagePushed, events.Source("receiver"), r.Push.Ref(), r.Push)
}

// UpgradeID is the rollout's upgrade id, derived from the push id and the
// workload as compute-spec derives it.
func (r Rollout) UpgradeID() string {
	return "u-" + events.DeriveID(events.PushID(r.Push), "upgrade", r.Workload.String())[:12]
}

// chain builds events in order, stamping their times.
type chain struct {
	r       Rollout
	id      string
	n       int
	out     []cloudevents.Event
	err     error
	targets map[string]string
}

func (c *chain) stamp(e cloudevents.Event, err error) cloudevents.Event {
	if err != nil && c.err == nil {
		c.err = err
	}
	e.SetTime(c.r.Start.Add(time.Duration(c.n) * c.r.Step))
	c.n++
	c.out = append(c.out, e)
	return e
}

// Events are the events the chain publishes for the rollout, in the order
// it would: the push; per wave, every pod's upgrade.planned, then its
// image.prepulled, pod.patched, the pod watcher's pod.updated (with the
// kubelet's container state) and container.restarted, and verify's
// outcome; then rollout.halted after a failed wave, or rollout.completed.
func (r Rollout) Events() ([]cloudevents.Event, error) {
	c := &chain{r: r, id: r.UpgradeID()}
	push, err := r.PushEvent()
	trigger := c.stamp(push, err)
	halted := false
	for _, wave := range r.waves() {
		trigger, halted = c.wave(trigger, wave)
		if halted {
			break
		}
	}
	typ := events.RolloutCompleted
	if halted {
		typ = events.RolloutHalted
	}
	c.end(trigger, typ)
	return c.out, c.err
}

func (r Rollout) waves() [][]Pod {
	by := map[int][]Pod{}
	for _, p := range r.Pods {
		by[p.Wave] = append(by[p.Wave], p)
	}
	var keys []int
	for k := range by {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := make([][]Pod, 0, len(keys))
	for _, k := range keys {
		out = append(out, by[k])
	}
	return out
}

// wave emits one wave; it returns the last outcome (the input compute-spec
// plans the next wave from) and whether a pod failed.
func (c *chain) wave(trigger cloudevents.Event, pods []Pod) (cloudevents.Event, bool) {
	plans := make([]events.Plan, len(pods))
	prev := make([]cloudevents.Event, len(pods))
	for i, p := range pods {
		plans[i] = c.plan(p)
		prev[i] = c.step(trigger, plans[i], events.UpgradePlanned, "compute-spec", plans[i])
	}
	for i := range pods {
		d := events.PrepulledData{Plan: plans[i], Node: pods[i].Node, PullMillis: 800}
		prev[i] = c.step(prev[i], plans[i], events.ImagePrepulled, "pre-pull", d)
	}
	for i := range pods {
		d := events.PatchedData{Plan: plans[i], ResourceVersion: fmt.Sprint(100 + i), PatchedAt: c.now()}
		prev[i] = c.step(prev[i], plans[i], events.PodPatched, "patch-pod", d)
	}
	failed := false
	for i, p := range pods {
		upd := c.podUpdated(p, plans[i])
		prev[i] = c.step(upd, plans[i], outcomeType(p.Outcome), "verify", c.outcome(p, plans[i]))
		failed = failed || outcome(p.Outcome) != events.OutcomeSucceeded
	}
	return prev[len(prev)-1], failed
}

func (c *chain) now() time.Time { return c.r.Start.Add(time.Duration(c.n) * c.r.Step) }

func (c *chain) plan(p Pod) events.Plan {
	return events.Plan{
		UpgradeID: c.id,
		Pod:       events.PodRef{Namespace: c.r.Workload.Namespace, Name: p.Name, UID: p.UID, Node: p.Node},
		Owner:     c.r.Workload,
		Containers: []events.ContainerPlan{{Name: "app", FromImage: c.r.Push.Name() + ":old",
			ToImage: c.r.Push.Ref(), ToDigest: c.r.Push.Digest}},
		Target: c.r.Push.Ref(), Wave: p.Wave, Prepull: true, PlannedAt: c.now(),
	}
}

// step is a "this pod reached a state" event: its id depends on the
// upgrade, the pod and the type (inplace.StepID), its trace continues in's.
func (c *chain) step(in cloudevents.Event, plan events.Plan, typ, fn string, data any) cloudevents.Event {
	id := events.DeriveID(plan.UpgradeID+"/"+plan.Pod.UID, typ, "")
	e, err := events.Follow(in, id, typ, events.Source(fn), plan.Pod.String(), data)
	e.SetExtension(events.ExtUpgradeID, plan.UpgradeID)
	return c.stamp(e, err)
}

// podUpdated is the pod watcher's event, a new trace with the upgrade id;
// for a succeeded pod followed by container.restarted.
func (c *chain) podUpdated(p Pod, plan events.Plan) cloudevents.Event {
	cs := corev1.ContainerStatus{Name: "app", Image: plan.Target, RestartCount: 1, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	if outcome(p.Outcome) != events.OutcomeSucceeded {
		cs = corev1.ContainerStatus{Name: "app", Image: plan.Target, State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: p.Reason, Message: p.Message}}}
	}
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: plan.Pod.Namespace, Name: p.Name, UID: types.UID(p.UID), ResourceVersion: fmt.Sprint(c.n)},
		Spec:       corev1.PodSpec{NodeName: p.Node, Containers: []corev1.Container{{Name: "app", Image: plan.Target}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{cs}},
	}
	id := events.DeriveID(events.PodStateKey(&pod), events.PodUpdated, "")
	e, err := events.New(id, events.PodUpdated, events.Source("pod-watcher"), plan.Pod.String(), events.PodUpdatedData{Pod: pod})
	e.SetExtension(events.ExtUpgradeID, c.id)
	upd := c.stamp(e, err)
	if outcome(p.Outcome) == events.OutcomeSucceeded {
		d := events.ContainerRestartedData{Pod: plan.Pod, Container: "app", OldContainerID: "containerd://old-" + p.UID,
			NewContainerID: "containerd://new-" + p.UID, RestartCount: 1, Image: plan.Target}
		rid := events.DeriveID(events.PodStateKey(&pod), events.ContainerRestarted, "app")
		re, err := events.New(rid, events.ContainerRestarted, events.Source("pod-watcher"), plan.Pod.String(), d)
		re.SetExtension(events.ExtUpgradeID, c.id)
		c.stamp(re, err)
	}
	return upd
}

func (c *chain) outcome(p Pod, plan events.Plan) events.OutcomeData {
	o := events.OutcomeData{Plan: plan, Outcome: outcome(p.Outcome), Reason: p.Reason, Message: p.Message,
		PatchedAt: c.now().Add(-2 * c.r.Step), FinishedAt: c.now()}
	if o.Outcome == events.OutcomeSucceeded {
		o.Reason, o.Message = "", ""
	}
	return o
}

func (c *chain) end(in cloudevents.Event, typ string) {
	d := events.RolloutData{UpgradeID: c.id, Workload: c.r.Workload, Target: c.r.Push.Ref(), Counts: c.counts(),
		TemplateSynced: typ == events.RolloutCompleted}
	if typ == events.RolloutHalted {
		d.Reason = "UpgradeRolledBack"
	}
	e, err := events.Follow(in, events.DeriveID(c.id, typ, ""), typ, events.Source("compute-spec"), c.r.Workload.String(), d)
	e.SetExtension(events.ExtUpgradeID, c.id)
	c.stamp(e, err)
}

func (c *chain) counts() events.Counts {
	n := events.Counts{Pods: len(c.r.Pods)}
	for _, e := range c.out {
		switch e.Type() {
		case events.UpgradeSucceeded:
			n.Succeeded++
		case events.UpgradeFailed:
			n.Failed++
		case events.UpgradeRolledBack:
			n.RolledBack++
		}
	}
	return n
}

func outcome(o string) string {
	if o == "" {
		return events.OutcomeSucceeded
	}
	return o
}

func outcomeType(o string) string {
	switch outcome(o) {
	case events.OutcomeRolledBack:
		return events.UpgradeRolledBack
	case events.OutcomeFailed:
		return events.UpgradeFailed
	}
	return events.UpgradeSucceeded
}

// Publisher is what Publish needs: *bus.Bus has it.
type Publisher interface {
	Publish(ctx context.Context, e cloudevents.Event) error
}

// Publish publishes evs in order.
func Publish(ctx context.Context, p Publisher, evs []cloudevents.Event) error {
	for _, e := range evs {
		if err := p.Publish(ctx, e); err != nil {
			return err
		}
	}
	return nil
}
