package prepull

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/inplace-dev/inplace/pkg/config"
)

// selector selects the pre-pull pods (Selector).
var selector = labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy, LabelComponent: Component})

// ours lists the pre-pull pods on node, after sweeping those a crash left
// behind.
func (f *Function) ours(ctx context.Context, cfg config.Defaults, node string) ([]corev1.Pod, error) {
	all, err := f.d.Reader.Pods(ctx, cfg.PrepullNamespace, selector)
	if err != nil {
		return nil, fmt.Errorf("pre-pull: list pods on %s: %w", node, err)
	}
	var pods []corev1.Pod
	for _, p := range all {
		if p.Spec.NodeName == node {
			pods = append(pods, p)
		}
	}
	return f.sweep(ctx, pods, cfg), nil
}

// sweep deletes pods older than 2 × PrepullTimeout (their plan is long
// gone) and returns pods: a deleted pod holds its slot until it is gone.
func (f *Function) sweep(ctx context.Context, pods []corev1.Pod, cfg config.Defaults) []corev1.Pod {
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || f.d.Clock.Since(p.CreationTimestamp.Time) <= 2*cfg.PrepullTimeout {
			continue
		}
		if err := f.delete(ctx, p); err != nil {
			f.d.Log.Warn("sweep pre-pull pod", "pod", p.Name, "err", err)
			continue
		}
		f.d.Log.Info("swept a stale pre-pull pod", "pod", p.Name, "node", p.Spec.NodeName)
	}
	return pods
}

// Sweep deletes stale pre-pull pods on every node; `inplace run` may call
// it periodically (each Handle sweeps the node it works on).
func (f *Function) Sweep(ctx context.Context) error {
	cfg := f.d.Config.Load()
	pods, err := f.d.Reader.Pods(ctx, cfg.PrepullNamespace, selector)
	if err != nil {
		return fmt.Errorf("pre-pull: sweep: %w", err)
	}
	f.sweep(ctx, pods, cfg)
	return nil
}

// deletedFor is how long a deleted pre-pull pod's UID is remembered: far
// longer than the watch takes to bring the deletion.
const deletedFor = 10 * time.Minute

// delete removes a pre-pull pod, pinned to its UID; gone already is fine,
// and a pod this process deleted already (or the API server marked
// deleted) is not deleted again.
func (f *Function) delete(ctx context.Context, p *corev1.Pod) error {
	if _, done := f.deleted.Get(p.UID); done || p.DeletionTimestamp != nil {
		return nil
	}
	err := f.d.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		Preconditions: metav1.NewUIDPreconditions(string(p.UID))})
	if apierrors.IsConflict(err) {
		// The UID precondition failed (the name holds another pod: ours is
		// gone), or the API server answered a conflict of its own: only a
		// read tells them apart.
		err = f.goneSince(ctx, p, err)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("pre-pull: delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	f.deleted.Set(p.UID, true, deletedFor)
	return nil
}

// goneSince is nil when p (by UID) no longer exists, or is being deleted,
// and conflict (the delete's answer, for a retry) while it is still there.
func (f *Function) goneSince(ctx context.Context, p *corev1.Pod, conflict error) error {
	cur, err := f.d.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case cur.UID != p.UID || cur.DeletionTimestamp != nil:
		return nil
	}
	return conflict
}

// withImages finds the pod pre-pulling the images of key.
func withImages(pods []corev1.Pod, key string) *corev1.Pod {
	for i := range pods {
		if pods[i].Labels[LabelImages] == key {
			return &pods[i]
		}
	}
	return nil
}

// freeSlot returns the name of a slot on node no pod holds, if any of the
// first n is free. A pod holds its slot until it is gone, terminating or
// not, so at most n pre-pull pods ever exist on a node; a pod whose pull
// ended gives its slot back when a plan needs one (reclaim).
func freeSlot(pods []corev1.Pod, node string, n int) (string, bool) {
	held := map[string]bool{}
	for _, p := range pods {
		held[p.Name] = true
	}
	for i := range n {
		if name := slotName(node, i); !held[name] {
			return name, true
		}
	}
	return "", false
}

// ended are the pods of pods whose pull is over (pulled, failed, or
// pending past timeout) for longer than grace, and that nobody deletes
// yet: they hold a slot and pull nothing. A plan following its pod ends it
// within moments of the pull's end (the watch wakes it, or its next look
// within Recheck); a pod left ended longer has lost its follower (a pull
// started ahead for a rollout a newer push superseded, a plan whose
// process stopped).
func ended(pods []corev1.Pod, timeout, grace time.Duration, now time.Time) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		since := createdAt(p).Add(timeout)
		if v, _ := evaluate(p); v != pending {
			since = endedAt(p)
		}
		if now.Sub(since) > grace {
			out = append(out, p)
		}
	}
	return out
}

// endedAt is when p's pull was seen to end: the latest start or finish of
// its containers, or (a failed pull, which the kubelet stamps nowhere) its
// creation.
func endedAt(p *corev1.Pod) time.Time {
	at := createdAt(p)
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.FinishedAt.After(at):
			at = cs.State.Terminated.FinishedAt.Time
		case cs.State.Running != nil && cs.State.Running.StartedAt.After(at):
			at = cs.State.Running.StartedAt.Time
		}
	}
	return at
}

// followGrace is how long a pod whose pull ended is left to the plan
// following it before reclaim takes its slot: several of that plan's
// looks.
func (f *Function) followGrace() time.Duration { return max(2*f.d.Recheck, 10*time.Second) }

// reclaim deletes the pods of a full node whose pull ended and that no
// plan followed (ended), so a plan waiting for a slot gets one at their
// deletion (the watch wakes it) instead of at the sweep; a pull seen done
// is remembered (pulledOn), so a later plan of its images does not pull
// again. It returns how many it ended.
func (f *Function) reclaim(ctx context.Context, pods []corev1.Pod, cfg config.Defaults) (int, error) {
	done := ended(pods, cfg.PrepullTimeout, f.followGrace(), f.d.Clock.Now())
	for _, p := range done {
		if v, _ := evaluate(p); v == pulled {
			f.pulled.Set(pulledKey(p.Spec.NodeName, p.Labels[LabelImages]), true, pulledFor)
		}
		if err := f.delete(ctx, p); err != nil {
			return 0, err
		}
		f.d.Log.Info("reclaimed the slot of an ended pre-pull pod", "pod", p.Name, "node", p.Spec.NodeName)
	}
	return len(done), nil
}
