package guard

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// inFlight checks p, pod's entry in the record r (nil: none), is in
// flight under upgradeID.
func inFlight(r *rollout.Rollout, p *rollout.Pod, owner events.ObjectRef, pod *corev1.Pod, upgradeID string) (*rollout.Pod, *Refusal) {
	if r.Workload.UID != "" && owner.UID != "" && r.Workload.UID != owner.UID {
		return nil, forged(ReasonNotPlanned, "the rollout record is of another %s (uid %s, not %s)", owner, r.Workload.UID, owner.UID)
	}
	switch {
	case p == nil:
		return nil, forged(ReasonNotPlanned, "the rollout %s of %s has no pod %s", r.UpgradeID, owner, pod.Name)
	case p.UID != string(pod.UID):
		return nil, forged(ReasonNotPlanned, "the rollout of %s planned pod %s with uid %s, not %s", owner, pod.Name, p.UID, pod.UID)
	case p.UpgradeID != upgradeID:
		// A later upgrade's: the record may carry how this one ended.
		f := forged(ReasonNotPlanned, "the rollout of %s has pod %s under upgrade %q, not %s", owner, pod.Name, p.UpgradeID, upgradeID)
		f.Ended = string(rollout.EndOf(r, p, pod.Name, string(pod.UID), upgradeID))
		return nil, f
	case p.State != rollout.InFlight:
		r := forged(ReasonNotPlanned, "upgrade %s of pod %s is %s in the rollout record, not in flight", upgradeID, pod.Name, p.State)
		r.Ended = string(p.State)
		return nil, r
	}
	return p, nil
}

// matchPlan: the plan's containers are exactly the recorded ones.
func matchPlan(r *rollout.Rollout, p *rollout.Pod, plan events.Plan) *Refusal {
	if p.UpgradeID == r.UpgradeID && plan.Target != r.Target() {
		return forged(ReasonNotThePlan, "the plan's target is %s; the rollout's is %s", plan.Target, r.Target())
	}
	if len(plan.Containers) != len(p.Containers) {
		return forged(ReasonNotThePlan, "the plan changes %d containers; the record %d", len(plan.Containers), len(p.Containers))
	}
	for _, want := range p.Containers {
		got := plan.Container(want.Name)
		if got == nil || got.FromImage != want.FromImage || got.ToImage != want.ToImage || got.Sidecar != want.Sidecar {
			return forged(ReasonNotThePlan, "container %s: the plan says %s, the record %s → %s",
				want.Name, describe(got), want.FromImage, want.ToImage)
		}
	}
	return nil
}

// recordedState is st as the record has it: every container the state
// changed is a recorded one with the recorded target, and its previous
// image (what a rollback restores) and imageID are the record's, whatever
// the annotation says; the annotation is a claim anyone who may edit the
// pod can make, the record is compute-spec's.
func recordedState(p *rollout.Pod, st *inplace.State) (*inplace.State, *Refusal) {
	out := *st
	out.Containers = append([]inplace.ContainerState(nil), st.Containers...)
	for i := range out.Containers {
		c := &out.Containers[i]
		var want *events.ContainerPlan
		for j := range p.Containers {
			if p.Containers[j].Name == c.Name {
				want = &p.Containers[j]
			}
		}
		switch {
		case want == nil:
			return nil, forged(ReasonNotThePlan, "the state changes container %s, which the rollout record does not plan", c.Name)
		case c.TargetImage != want.ToImage:
			return nil, forged(ReasonNotThePlan, "container %s: the state's target is %s; the record's %s", c.Name, c.TargetImage, want.ToImage)
		}
		c.PreviousImage = want.FromImage
		if want.FromImageID != "" {
			c.PreviousImageID = want.FromImageID
		}
	}
	return &out, nil
}

func describe(c *events.ContainerPlan) string {
	if c == nil {
		return "nothing"
	}
	return c.FromImage + " → " + c.ToImage
}

// optedIn: the owner's annotations opt in now.
func optedIn(owner kube.Workload) *Refusal {
	opts, err := policy.FromAnnotations(owner.Meta.Annotations, policy.StandardDefaults())
	switch {
	case err != nil:
		return withdrawn(ReasonNotOptedIn, "%s: %v", owner.Ref, err)
	case !opts.OptedIn:
		return withdrawn(ReasonNotOptedIn, "%s does not opt in (no %s annotation)", owner.Ref, policy.AnnotationPolicy)
	}
	return nil
}

// allowed: the owner opts in and its current policy allows every target
// from what the container runs now (under an undo compute-spec accepted:
// the undo policy, back to what the pods ran before). A container no
// longer on the plan's previous image (already on the target, changed by
// someone else) is not the policy's to judge: the patch leaves it alone or
// reports it.
func allowed(owner kube.Workload, pod *corev1.Pod, cps []events.ContainerPlan, undo bool) *Refusal {
	if r := optedIn(owner); r != nil {
		return r
	}
	opts, _ := policy.FromAnnotations(owner.Meta.Annotations, policy.StandardDefaults())
	if undo {
		opts.Policy = policy.UndoPolicy()
	}
	for _, cp := range cps {
		if !imageref.SameRepository(cp.FromImage, cp.ToImage) {
			return forged(ReasonNotThePlan, "container %s: %s is not of the repository of %s", cp.Name, cp.ToImage, cp.FromImage)
		}
		image, running, ok := runs(pod, cp.Name)
		if !ok || image != cp.FromImage {
			continue // gone, changed by others (the patch reports either) or already there
		}
		to, _ := imageref.Parse(cp.ToImage)
		d := policy.Decide(opts.Policy, current(image, running), policy.Pushed{Tag: to.Tag, Digest: to.Digest})
		if !d.Upgrade {
			return withdrawn(ReasonPolicyRefuses, "container %s: %s", cp.Name, d.Reason)
		}
	}
	return nil
}

// runs is a container's spec image and the digest the kubelet reports.
func runs(pod *corev1.Pod, name string) (image, digest string, ok bool) {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.Name == name {
				image, ok = c.Image, true
			}
		}
	}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.Name == name {
				digest = imageref.DigestOf(cs.ImageID)
			}
		}
	}
	return image, digest, ok
}

// current is what a container runs, for the policy: its spec tag ("latest"
// when it names none) and the running digest.
func current(image, running string) policy.Current {
	ref, _ := imageref.Parse(image)
	cur := policy.Current{Tag: ref.Tag, Digest: running}
	if cur.Tag == "" && ref.Digest == "" {
		cur.Tag = "latest"
	}
	if cur.Digest == "" {
		cur.Digest = ref.Digest
	}
	return cur
}

// Reasons of a refusal (the outcome's and the Event's reason).
const (
	ReasonNotOptedIn    = inplace.ReasonNotOptedIn
	ReasonNotPlanned    = "NotPlanned"
	ReasonNotTheOwner   = "NotTheOwner"
	ReasonNotThePlan    = "NotThePlan"
	ReasonPolicyRefuses = inplace.ReasonPolicyRefuses
)

// Refusal is why a write was refused.
type Refusal struct {
	Reason  string
	Message string
	// Withdrawn: the record confirms the plan but the owner no longer
	// allows it; otherwise the claim is forged or stale.
	Withdrawn bool
	// Ended is the pod's state in the rollout record (Succeeded, Failed,
	// RolledBack, ...) when the record has this very upgrade of this very
	// pod and it is over, also as an end a later rollout carries
	// (rollout.EndOf): the claim is not forged, only late (a success
	// verify recorded on the bus and in the record, not on the pod).
	Ended string
	// NotInFlight: the record has no such upgrade of this pod in flight
	// (never planned, ended, the pod under another upgrade, no record):
	// nothing will carry that upgrade on, so what a step did for it alone
	// (patch-pod's gate set False) is undone.
	NotInFlight bool
}

func (r *Refusal) Error() string {
	what := "forged or stale"
	if r.Withdrawn {
		what = "no longer allowed"
	}
	return fmt.Sprintf("refused (%s): %s: %s", what, r.Reason, r.Message)
}

func forged(reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Message: strings.TrimSpace(fmt.Sprintf(format, args...))}
}

func withdrawn(reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Message: fmt.Sprintf(format, args...), Withdrawn: true}
}
