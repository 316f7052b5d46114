package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/keylock"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Name is the function's name.
const Name = "verify"

// FieldManager names this function's writes.
const FieldManager = "inplace-verify"

// Event reasons recorded on the pod.
const (
	EventUpgrade  = "InPlaceUpgrade"
	EventRollback = "InPlaceRollback"
)

// attempts bounds re-reads after a failed precondition within one delivery.
const attempts = 5

// Deps are what the function needs.
type Deps struct {
	// Client may be least-privileged: see rbac.yaml.
	Client kubernetes.Interface
	// Reader reads the pod: the process's informer cache in `inplace
	// run`; nil reads through Client (a GET each time).
	Reader kube.Reader
	// Guard confirms the pod's state before each write; required.
	Guard Guard
	// Recorder records Kubernetes Events on the pod; nil records none.
	Recorder record.EventRecorder
	// Config gives the default verify-seconds for plans without one; nil
	// means the standard defaults.
	Config *config.Store
	Log    *slog.Logger
	Clock  clock.PassiveClock
	// Recheck is the longest pod.patched waits to be delivered again while
	// the kubelet works: a safety net, the pod watcher's pod.updated wakes
	// verify up for every change of the pod, and the timer comes back
	// sooner for a deadline or a min-ready time; default 15s.
	Recheck time.Duration
	// PullErrors is how long a plain ErrImagePull may last before it
	// counts as a failure (ImagePullBackOff counts at once); default 30s.
	PullErrors time.Duration
	// MinReady is how long every container must have been running before
	// success (or a finished rollback) is called; default 0.
	MinReady time.Duration
	// RollbackMin is the least time a rollback is given (the kubelet
	// acts on it only once the upgrade's pull is done); default 2m.
	RollbackMin time.Duration
	// Leases hold a pod for one replica at a time (bus.Leases); nil: the
	// per-pod lock of this process only.
	Leases Leases
	// Changes wakes a delivery waiting for the Reader's cache to show the
	// pod as its input saw it (WatchPods on the informer behind Reader);
	// nil: such a delivery reads the pod from the API server.
	Changes Changes
}

// Changes tells waiters when a pod changes (notify.Keys, keyed by
// "namespace/name").
type Changes interface {
	Changed(key string) (<-chan struct{}, func())
}

// Leases hold a pod for one replica of a function at a time; a pod held
// by another replica is ErrHeld (bus.Leases).
type Leases = bus.LeaseTaker

// Function is the verify function.
type Function struct {
	d Deps
	// pods is one decision at a time per pod: pod.patched and pod.updated
	// for one pod arrive together, and each would
	// otherwise read, decide and write the same step (all but one write
	// failing their precondition).
	pods keylock.Locks
	// reported are the outcomes on the stream already.
	reported reported
	// looked are the pods' states pod.updated decisions have read.
	looked looked
}

// New returns the function.
func New(d Deps) *Function {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Recorder == nil {
		d.Recorder = kube.NoEvents{}
	}
	if d.Reader == nil {
		d.Reader = kube.Live{Client: d.Client}
	}
	if d.Recheck <= 0 {
		d.Recheck = 15 * time.Second
	}
	if d.PullErrors <= 0 {
		d.PullErrors = 30 * time.Second
	}
	if d.RollbackMin <= 0 {
		d.RollbackMin = 2 * time.Minute
	}
	return &Function{d: d, reported: newReported(), looked: newLooked()}
}

// Name implements runner.Function.
func (f *Function) Name() string { return Name }

// Types implements runner.Function. container.restarted is not among
// them: the pod watcher publishes it only beside a pod.updated of the same
// change (watcher.Changes), and verify decides from the pod, which that
// pod.updated wakes it up for.
func (f *Function) Types() []string {
	return []string{events.PodPatched, events.PodUpdated}
}

// Handle checks the pod named by e and takes the next step of its upgrade.
func (f *Function) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	s, err := f.stepFor(ctx, e)
	if err != nil || s == nil {
		return nil, err
	}
	// The timer of an upgrade whose success or rollback this process has
	// confirmed on the stream has nothing left to catch: it would read the
	// pod, take the lease and the record's word, only to find that outcome
	// on the stream already (reported.skip). It comes back up to Recheck
	// after the pod.updated that reported the landing, so after every
	// rollout, once per pod. A replayed one is answered in full: a replay
	// shows what each function decides.
	if s.timer && events.Ext(e, events.ExtReplay) == "" && f.reported.ended(*s.plan) {
		return nil, nil
	}
	key := s.ref.Namespace + "/" + s.ref.Name
	defer f.pods.Lock(key)()
	if f.looked.answered(s) {
		return nil, nil
	}
	// A decision to wait writes nothing and reports nothing, so it is
	// taken without the pod's lease: most deliveries (the kubelet still at
	// work) cost no lease round trips. One that would act stops before
	// its first write, Event or outcome (errLease), and is taken again,
	// from a fresh read, under the lease.
	s.leased = f.d.Leases == nil
	outs, err := s.attempts(ctx)
	if errors.Is(err, errLease) {
		release, err := bus.TakeLease(ctx, f.d.Leases, Name, cmp.Or(s.ref.UID, s.ref.Namespace+"."+s.ref.Name))
		if err != nil {
			return nil, err
		}
		defer release()
		s.leased = true
		outs, err = s.attempts(ctx)
		f.looked.note(s, len(outs), err)
		return outs, err
	}
	f.looked.note(s, len(outs), err)
	return outs, err
}

// attempts takes the step, reading the pod again while it changes under
// the attempt.
func (s *step) attempts(ctx context.Context) ([]cloudevents.Event, error) {
	for range attempts {
		outs, err := s.attempt(ctx)
		if !errors.Is(err, errAgain) {
			return outs, err
		}
	}
	return nil, fmt.Errorf("verify %s: the pod kept changing while being checked", s.ref)
}

// stepFor reads the input; nil when there is nothing to do.
func (f *Function) stepFor(ctx context.Context, e cloudevents.Event) (*step, error) {
	s := &step{f: f, in: e}
	switch e.Type() {
	case events.PodPatched:
		d, err := events.AsIn[events.PatchedData](ctx, e)
		if err != nil {
			return nil, err
		}
		s.plan, s.ref, s.timer, s.seenRV = &d.Plan, d.Plan.Pod, true, d.ResourceVersion
	case events.PodUpdated:
		d, err := events.AsIn[events.PodUpdatedData](ctx, e)
		if err != nil {
			return nil, err
		}
		// A Patched state is looked at even when the pod passes the
		// completion check: that pod.updated may be the one that lands it.
		if st, _ := inplace.ParseState(&d.Pod); st == nil || !st.Phase.Active() {
			return nil, nil
		}
		s.last, s.seenRV = &d.Pod, d.Pod.ResourceVersion
		s.ref = events.PodRef{Namespace: d.Pod.Namespace, Name: d.Pod.Name, UID: string(d.Pod.UID)}
	default:
		return nil, nil
	}
	return s, nil
}

// limits are the plan's time bounds.
func (f *Function) limits(plan events.Plan) limits {
	secs := plan.VerifySeconds
	if secs <= 0 {
		d := config.StandardDefaults()
		if f.d.Config != nil {
			d = f.d.Config.Load()
		}
		secs = d.Policy.VerifySeconds
	}
	// The workload's own minReadySeconds, when longer than the default.
	minReady := max(f.d.MinReady, time.Duration(plan.MinReadySeconds)*time.Second)
	return limits{verify: time.Duration(secs) * time.Second, pullErrors: f.d.PullErrors, minReady: minReady, rollbackMin: f.d.RollbackMin}
}

// gateToOpen reports whether the pod declares the gate and it is not True.
func gateToOpen(pod *corev1.Pod) bool {
	if !inplace.HasGate(pod) {
		return false
	}
	s, _ := inplace.GateStatus(pod)
	return s != corev1.ConditionTrue
}
