package controller

import (
	"context"
	"fmt"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// EventRefused is the reason of the Warning Event on a pod (or workload)
// an outcome, a push or a request was refused for.
const EventRefused = "InPlaceRefused"

// PodReader reads one pod, or answers NotFound (kube.Reader, kube.Live).
type PodReader interface {
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// confirmOutcome checks an outcome against its pod before it is recorded:
// an outcome on the bus is a claim, and whoever holds a key patch-pod or
// verify publish with can make one. What the pod shows became of the plan
// the rollout record holds (inplace.AccountOf, as the watchdog reads a
// pod) must bear the outcome out. The pod is read from the cache, and
// from the API server when the cache contradicts the outcome (it may be
// behind the write the outcome follows); an outcome the API server's pod
// contradicts too is refused: a Warning Event naming the contradiction, a
// permanent error (dead-lettered with the reason), nothing recorded. The
// rollout goes on: the pod's real outcome comes from verify or the
// watchdog. An outcome that would change nothing in the record is not
// looked at (Record ignores it): then seen is the record read that showed
// it so (shared, read only; nil: there is no record).
func (ctl *Rollouts) confirmOutcome(ctx context.Context, typ string, o events.OutcomeData) (confirmed *rollout.Pod, seen *rollout.Rollout, err error) {
	key := rollout.Key(o.Plan.Owner)
	r, p, err := ctl.recordable(ctx, key, typ, o, ctl.readRaw)
	if err == nil && p == nil && ctl.d.Reads != nil { // the watched copy may lag: ask the bucket
		r, p, err = ctl.recordable(ctx, key, typ, o, ctl.d.Reads.Fresh)
	}
	if err != nil {
		return nil, nil, err
	}
	if p == nil {
		return nil, r, nil
	}
	plan := planner.PodPlan(r, p)
	pod, err := ctl.cachedPod(ctx, r.Workload, p.Name)
	if err != nil {
		return nil, nil, err
	}
	why := inplace.AccountOf(pod, plan).Contradicts(typ, o.Reason)
	if why != "" && ctl.d.Fresh != nil {
		if pod, err = readPod(ctx, ctl.d.Fresh, r.Workload.Namespace, p.Name); err != nil {
			return nil, nil, err
		}
		why = inplace.AccountOf(pod, plan).Contradicts(typ, o.Reason)
	}
	if why == "" {
		c := *p
		return &c, r, nil
	}
	return nil, nil, ctl.refuseOutcome(r, pod, typ, plan, why)
}

// recordable is key's record as read reads it, and the pod entry the
// outcome would change in it (nil: none, or no record).
func (ctl *Rollouts) recordable(ctx context.Context, key, typ string, o events.OutcomeData,
	read func(context.Context, string) ([]byte, uint64, error)) (*rollout.Rollout, *rollout.Pod, error) {
	raw, rev, err := read(ctx, key)
	if err != nil || raw == nil {
		return nil, nil, err
	}
	r, err := ctl.d.Decoded.Get(key, rev, raw)
	if err != nil {
		return nil, nil, settle.Permanent(wrap("decode rollout state", err))
	}
	return r, rollout.Recordable(r, typ, o), nil
}

// readRaw is key's record from Reads (a watched copy), or from Store.
func (ctl *Rollouts) readRaw(ctx context.Context, key string) ([]byte, uint64, error) {
	if ctl.d.Reads != nil {
		return ctl.d.Reads.Get(ctx, key)
	}
	return ctl.d.Store.Get(ctx, key)
}

// cachedPod is the named pod of the workload from the cache (Pods, else
// the workload's pods), nil when it has none.
func (ctl *Rollouts) cachedPod(ctx context.Context, w events.ObjectRef, name string) (*corev1.Pod, error) {
	if ctl.d.Pods != nil {
		return readPod(ctx, ctl.d.Pods, w.Namespace, name)
	}
	pods, err := ctl.d.Cache.PodsOf(w)
	if err != nil {
		return nil, wrap("pods of "+w.String(), err)
	}
	for _, p := range pods {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, nil
}

// readPod is the pod from r, nil when it is not found.
func readPod(ctx context.Context, r PodReader, ns, name string) (*corev1.Pod, error) {
	pod, err := r.Pod(ctx, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, wrap("get pod "+ns+"/"+name, err)
	}
	return pod, nil
}

// refuseOutcome records why an outcome is not recorded (a Warning Event on
// the pod, or on the workload when the pod is gone; a log line) and
// returns the permanent error for its dead letter.
func (ctl *Rollouts) refuseOutcome(r *rollout.Rollout, pod *corev1.Pod, typ string, plan events.Plan, why string) error {
	what := fmt.Sprintf("%s of upgrade %s", events.Short(typ), plan.UpgradeID)
	ctl.d.Log.Warn("outcome refused", "pod", plan.Pod.String(), "upgrade", plan.UpgradeID, "outcome", events.Short(typ), "why", why)
	if ctl.d.Recorder != nil {
		var obj runtime.Object
		if pod != nil {
			obj = pod
		} else if w, ok, err := ctl.d.Cache.Get(r.Workload); err == nil && ok {
			obj, _ = w.Object.(runtime.Object)
		}
		if obj != nil {
			ctl.d.Recorder.Eventf(obj, corev1.EventTypeWarning, EventRefused, "Refused %s for pod %s: %s", what, plan.Pod.Name, why)
		}
	}
	return settle.Permanentf("compute-spec: %s for pod %s refused: %s", what, plan.Pod, why)
}
