package guard

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Records reads rollout records (bus.KV, read-only use).
type Records interface {
	Get(ctx context.Context, key string) ([]byte, uint64, error)
}

// Cached records (bus.Watched) may lag a write: a check they refuse is
// made again on the record read past the cache (Fresh), so a lag costs a
// read, never a refusal the record does not bear out.
type Cached interface {
	Records
	Fresh(ctx context.Context, key string) ([]byte, uint64, error)
}

// fresh is the guard to check again with when err refuses a check made on
// cached records; nil otherwise.
func (g *Guard) fresh(err error) *Guard {
	cached, ok := g.Records.(Cached)
	var r *Refusal
	if !ok || !errors.As(err, &r) {
		return nil
	}
	f := *g
	f.Records = freshRecords{cached}
	return &f
}

// freshRecords reads past the cache.
type freshRecords struct{ c Cached }

func (f freshRecords) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	return f.c.Fresh(ctx, key)
}

// Guard checks claims against the cluster and the rollout records.
type Guard struct {
	// Client reads the pod's owners (get on replicasets, deployments,
	// statefulsets, daemonsets).
	Client kubernetes.Interface
	// Owners, when set, resolves owners instead (the process's informer
	// cache, each link pinned to its UID; the admission policy refuses a
	// write to a pod whose owner no longer opts in, whatever a cache says).
	Owners interface {
		Owner(ctx context.Context, pod *corev1.Pod) (kube.Workload, bool, error)
	}
	Records Records
	// Decoded, when set, shares the records read by revision with the
	// process's other readers, each pod decoded once it is checked (nil:
	// each check reads the record anew).
	Decoded *rollout.Decoded
}

// Plan checks a plan patch-pod is about to apply to pod (as just read). It
// returns nil, a *Refusal, or an error reading the cluster or the record
// (retryable).
func (g *Guard) Plan(ctx context.Context, pod *corev1.Pod, plan events.Plan) error {
	err := g.plan(ctx, pod, plan)
	if f := g.fresh(err); f != nil {
		return f.plan(ctx, pod, plan)
	}
	return err
}

func (g *Guard) plan(ctx context.Context, pod *corev1.Pod, plan events.Plan) error {
	c, err := g.lookup(ctx, pod, plan.UpgradeID)
	if err != nil || c == nil {
		return err
	}
	if plan.Owner.Kind != c.owner.Ref.Kind || plan.Owner.Name != c.owner.Ref.Name || plan.Owner.Namespace != c.owner.Ref.Namespace {
		return forged(ReasonNotTheOwner, "the plan names %s as the owner; the pod belongs to %s", plan.Owner, c.owner.Ref)
	}
	if r := matchPlan(c.record, c.pod, plan); r != nil {
		return r
	}
	if plan.Resize != nil || c.record.Resize != nil {
		if plan.Resize == nil {
			return forged(ReasonNotThePlan, "the rollout record of %s is a resize; the plan is not", c.owner.Ref)
		}
		return nilIfNone(planResize(c, pod, plan))
	}
	if (plan.Restart != nil) != (c.record.Restart != nil) {
		return forged(ReasonNotThePlan, "the plan and the rollout record of %s disagree on whether it is a restart", c.owner.Ref)
	}
	if plan.Restart != nil {
		if r := allowedRestart(c.owner, pod, plan.Containers); r != nil {
			return r
		}
		return nil
	}
	if r := allowed(c.owner, pod, plan.Containers, undoing(c)); r != nil {
		return r
	}
	return nil
}

// State checks the upgrade a pod's inplace.dev/state annotation describes
// before verify writes the pod (gate, state, rollback), and returns the
// state as the rollout record has it: the previous images a rollback
// restores are the record's (recordedState), however the annotation was
// edited.
func (g *Guard) State(ctx context.Context, pod *corev1.Pod, st *inplace.State) (*inplace.State, error) {
	rec, err := g.state(ctx, pod, st)
	if f := g.fresh(err); f != nil {
		return f.state(ctx, pod, st)
	}
	return rec, err
}

func (g *Guard) state(ctx context.Context, pod *corev1.Pod, st *inplace.State) (*inplace.State, error) {
	c, err := g.lookup(ctx, pod, st.UpgradeID)
	if err != nil || c == nil {
		return nil, err
	}
	rec, r := recordedState(c.pod, st)
	if r != nil {
		return nil, r
	}
	if st.Resize != nil {
		if r := stateResize(c.pod, st); r != nil {
			return nil, r
		}
	}
	if r := optedIn(c.owner); r != nil {
		return nil, r
	}
	return rec, nil
}

// undoing: the pod is in flight under an undo compute-spec accepted (the
// rollout record, compute-spec's alone, says so): going back to the images
// recorded before the undone upgrade is allowed whatever the policy.
func undoing(c *checked) bool {
	return c.record.Push.Undo != "" && c.pod.UpgradeID == c.record.UpgradeID
}

// checked is what a check reads: the pod's live owner, its rollout record
// (the top level: its Pods are not read) and the pod's entry in it.
type checked struct {
	owner  kube.Workload
	record *rollout.Rollout
	pod    *rollout.Pod
}

// lookup reads the owner and the record and finds the pod in flight in it
// under upgradeID; a refusal it returns is NotInFlight.
func (g *Guard) lookup(ctx context.Context, pod *corev1.Pod, upgradeID string) (*checked, error) {
	c, err := g.find(ctx, pod, upgradeID)
	var r *Refusal
	if errors.As(err, &r) {
		r.NotInFlight = true
	}
	return c, err
}

func (g *Guard) find(ctx context.Context, pod *corev1.Pod, upgradeID string) (*checked, error) {
	var owner kube.Workload
	var ok bool
	var err error
	if g.Owners != nil {
		owner, ok, err = g.Owners.Owner(ctx, pod)
	} else {
		owner, ok, err = kube.LiveOwner(ctx, g.Client, pod)
	}
	if err != nil {
		return nil, fmt.Errorf("guard: owner of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if !ok {
		return nil, forged(ReasonNotOptedIn, "the pod has no owner inplace manages (its owner is gone or of another kind)")
	}
	raw, rev, err := g.Records.Get(ctx, rollout.Key(owner.Ref))
	if err != nil {
		return nil, fmt.Errorf("guard: rollout record of %s: %w", owner.Ref, err)
	}
	if raw == nil {
		if r := optedIn(owner); r != nil {
			r.Withdrawn = false
			return nil, r
		}
		return nil, forged(ReasonNotPlanned, "%s has no rollout record", owner.Ref)
	}
	v, err := g.Decoded.View(rollout.Key(owner.Ref), rev, raw)
	var recorded *rollout.Pod
	if err == nil {
		recorded, err = v.Pod(pod.Name)
	}
	if err != nil {
		return nil, forged(ReasonNotPlanned, "the rollout record of %s cannot be read: %v", owner.Ref, err)
	}
	r := v.Record()
	p, refusal := inFlight(r, recorded, owner.Ref, pod, upgradeID)
	if refusal != nil {
		return nil, refusal
	}
	return &checked{owner: owner, record: r, pod: p}, nil
}

// Ended is the state the rollout record holds plan's pod in once plan's
// upgrade of it is over there (Succeeded, Failed, RolledBack, Deleted,
// ...), also when a later rollout took the record and carries that end
// (rollout.EndOf); "" while it is in flight, or when the record has no
// such pod (its name, its UID) under that upgrade. The record is found by the plan's
// owner, not the pod's live one: verify asks once the pod is gone, and its
// owner may be gone with it (its namespace deleted); a plan that names
// another owner finds nothing there and reads "". Cached records that have
// the pod still in flight are read again past the cache: the end may have
// been recorded a moment before the pod was deleted.
func (g *Guard) Ended(ctx context.Context, plan events.Plan) (string, error) {
	state, err := ended(ctx, g.Records, g.Decoded, plan)
	if c, ok := g.Records.(Cached); ok && err == nil && state == "" {
		return ended(ctx, freshRecords{c}, g.Decoded, plan)
	}
	return state, err
}

func ended(ctx context.Context, records Records, decoded *rollout.Decoded, plan events.Plan) (string, error) {
	key := rollout.Key(plan.Owner)
	raw, rev, err := records.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("guard: rollout record of %s: %w", plan.Owner, err)
	}
	if raw == nil {
		return "", nil
	}
	v, err := decoded.View(key, rev, raw)
	if err != nil {
		return "", nil // a record that cannot be read says nothing of the pod
	}
	if r := v.Record(); r.Workload.UID != "" && plan.Owner.UID != "" && r.Workload.UID != plan.Owner.UID {
		return "", nil
	}
	p, err := v.Pod(plan.Pod.Name)
	if err != nil {
		return "", nil
	}
	return string(rollout.EndOf(v.Record(), p, plan.Pod.Name, plan.Pod.UID, plan.UpgradeID)), nil
}
