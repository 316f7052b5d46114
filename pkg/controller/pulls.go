package controller

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/pulls"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Pulls is what compute-spec reads of the nodes' pulls: a node's
// status.images and the pre-pull pods (kube.Cache with nodes, both from
// informers).
type Pulls interface {
	// NodeImages is the node's status.images; ok false when the node is
	// not known.
	NodeImages(name string) (images []corev1.ContainerImage, ok bool)
	// PrepullPods are the pre-pull pods of namespace.
	PrepullPods(namespace string) ([]*corev1.Pod, error)
}

// PullView is what the cache shows of the pulls on the nodes of some
// candidates: each node's status.images, and its pre-pull pods by images.
type PullView struct {
	nodes    map[string][]corev1.ContainerImage
	prepulls map[string]map[string]*corev1.Pod // node → images key → pod
}

// ViewPulls reads the pulls of the nodes cands run on. Nil when there is
// nothing to wait for: no Pulls (nothing pulls ahead, as in Knative mode).
func (ctl *Rollouts) ViewPulls(cands []rollout.Candidate) (*PullView, error) {
	if ctl.d.Pulls == nil {
		return nil, nil
	}
	v := &PullView{nodes: map[string][]corev1.ContainerImage{}, prepulls: map[string]map[string]*corev1.Pod{}}
	looked := map[string]bool{} // a node holds many candidates: read it once
	for _, c := range cands {
		if c.Pod.Node == "" || looked[c.Pod.Node] {
			continue
		}
		looked[c.Pod.Node] = true
		if imgs, ok := ctl.d.Pulls.NodeImages(c.Pod.Node); ok {
			v.nodes[c.Pod.Node] = imgs
		}
	}
	pods, err := ctl.d.Pulls.PrepullPods(ctl.d.Defaults.Load().PrepullNamespace)
	if err != nil {
		return nil, wrap("pre-pull pods", err)
	}
	for _, p := range pods {
		if !pulls.IsPrepull(p) || p.DeletionTimestamp != nil {
			continue
		}
		n := p.Spec.NodeName
		if v.prepulls[n] == nil {
			v.prepulls[n] = map[string]*corev1.Pod{}
		}
		v.prepulls[n][p.Labels[pulls.LabelImages]] = p
	}
	return v, nil
}

// HoldPulling is cands with the candidates whose node is pulling their
// images marked (Held), so that a pod is planned once its node has them
// and never holds a max-unavailable slot while it waits for a pull under
// way. It is re-derived from the cluster on every transition: the
// pre-pull pod's end or removal (or the node's status.images) wakes the
// rollout (Wake), and a node any pod of r was planned on holds the images
// already (or failed to get them: pre-pull reports that on the planned
// pod). cands is read only (the planner's memo shares it): the result is
// cands itself when no mark changes, and a copy otherwise.
func HoldPulling(v *PullView, r *rollout.Rollout, cands []rollout.Candidate, timeout time.Duration, now time.Time) []rollout.Candidate {
	if v == nil || !r.Options.Prepull || r.Request() != nil {
		return unheld(cands)
	}
	planned := map[string]bool{}
	for _, p := range r.Pods {
		if p.State != rollout.Pending && p.State != rollout.Current && p.UpgradeID == r.UpgradeID {
			planned[p.Node] = true
		}
	}
	var out []rollout.Candidate // nil while no mark changed
	for i := range cands {
		c := &cands[i]
		held := len(c.Containers) > 0 && c.Pod.Node != "" && !planned[c.Pod.Node] && v.pulling(c, timeout, now)
		if held == c.Held {
			continue
		}
		if out == nil {
			out = slices.Clone(cands)
		}
		out[i].Held = held
	}
	if out == nil {
		return cands
	}
	return out
}

// unheld is cands with no candidate Held: cands itself when none is, a
// copy otherwise.
func unheld(cands []rollout.Candidate) []rollout.Candidate {
	i := slices.IndexFunc(cands, func(c rollout.Candidate) bool { return c.Held })
	if i < 0 {
		return cands
	}
	out := slices.Clone(cands)
	for i := range out {
		out[i].Held = false
	}
	return out
}

// pulling tells whether c's node is getting c's images: a pre-pull pod of
// them is pulling there, within timeout. Only a pull under way holds a
// pod, for its end is a change of the cluster that wakes the rollout. A
// node with no pull of them under way and not listing them holds nothing,
// even if pre-pull is about to start one there (Warm): it may never (it
// saw them pulled moments ago, its pod is shared with another rollout and
// ended, the node has no free slot), and the node's status.images, which
// lists at most 50 images, may never show them. The pod is planned, and
// its own pre-pull finds the images there or pulls them.
func (v *PullView) pulling(c *rollout.Candidate, timeout time.Duration, now time.Time) bool {
	have, known := v.nodes[c.Pod.Node]
	if !known {
		return false // the node is gone: the planned pod's pre-pull says so
	}
	images, always := pulls.Targets(c.Containers)
	if pulls.OnNode(have, images, always) {
		return false
	}
	p := v.prepulls[c.Pod.Node][pulls.Key(images)]
	if p == nil {
		return false
	}
	verdict, _ := pulls.Evaluate(p)
	return verdict == pulls.Pending && now.Sub(p.CreationTimestamp.Time) <= timeout
}
