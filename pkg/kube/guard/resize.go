package guard

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// ReasonNotTheRecordedResources: a resize's plan or state names other
// resources than compute-spec recorded.
const ReasonNotTheRecordedResources = "NotTheRecordedResources"

// planResize checks a resize plan: the record is a resize too, every
// container's resources are the recorded ones, the owner opts in and no
// image is changed. The policy has no say: nothing new runs.
func planResize(c *checked, pod *corev1.Pod, plan events.Plan) *Refusal {
	if c.record.Resize == nil {
		return forged(ReasonNotThePlan, "the plan is a resize; the rollout record of %s is not", c.owner.Ref)
	}
	for _, cp := range plan.Containers {
		want := recorded(c.pod, cp.Name)
		if r := sameResources(cp.Name, cp.Resources, want); r != nil {
			return r
		}
		if cp.FromImage != cp.ToImage {
			return forged(ReasonNotThePlan, "container %s: a resize changes the image %s to %s", cp.Name, cp.FromImage, cp.ToImage)
		}
	}
	return allowedResize(c.owner)
}

// allowedResize: the owner opts in.
func allowedResize(owner kube.Workload) *Refusal {
	return optedIn(owner)
}

// stateResize: a resize state's containers resize what the record says,
// from and to (what a rollback would resize back to).
func stateResize(p *rollout.Pod, st *inplace.State) *Refusal {
	for _, c := range st.Containers {
		if r := sameResources(c.Name, c.Resources, recorded(p, c.Name)); r != nil {
			return r
		}
	}
	return nil
}

func recorded(p *rollout.Pod, name string) *events.ResizeResources {
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			return p.Containers[i].Resources
		}
	}
	return nil
}

func sameResources(name string, got, want *events.ResizeResources) *Refusal {
	switch {
	case want == nil:
		return forged(ReasonNotThePlan, "container %s: the rollout record plans no resize of it", name)
	case got == nil:
		return forged(ReasonNotThePlan, "container %s: no resources where the record plans a resize", name)
	case !resize.Equal(&got.From, &want.From) || !resize.Equal(&got.To, &want.To):
		return forged(ReasonNotTheRecordedResources, "container %s: %s → %s, where the record has %s → %s", name,
			resize.String(got.From), resize.String(got.To), resize.String(want.From), resize.String(want.To))
	}
	return nil
}

// nilIfNone keeps a nil *Refusal a nil error.
func nilIfNone(r *Refusal) error {
	if r == nil {
		return nil
	}
	return r
}
