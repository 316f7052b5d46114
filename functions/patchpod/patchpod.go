package patchpod

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/keylock"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Name is the function's name.
const Name = "patch-pod"

// FieldManager names this function's writes.
const FieldManager = "inplace-patch-pod"

// Event reasons recorded on the pod.
const (
	EventUpgrade = "InPlaceUpgrade"
	// ReasonAlreadyUpToDate: the pod already ran the planned images.
	ReasonAlreadyUpToDate = "AlreadyUpToDate"
	// ReasonPatchRejected: the API server refused the patch as invalid.
	ReasonPatchRejected = "PatchRejected"
	// ReasonNotDrained: the pod stayed Ready, or a ready endpoint, after
	// its readiness gate went False.
	ReasonNotDrained = "NotDrained"
	// EventRefused: a plan the cluster and the rollout record do not
	// confirm (a Warning Event on the pod; nothing is written to it).
	EventRefused = "InPlaceRefused"
)

// Guard re-derives a plan from the cluster and the rollout record before
// any write (guard.Guard).
type Guard interface {
	Plan(ctx context.Context, pod *corev1.Pod, plan events.Plan) error
}

// attempts bounds re-reads after a failed precondition within one delivery.
const attempts = 5

// Deps are what the function needs.
type Deps struct {
	// Client may be least-privileged: see rbac.yaml.
	Client kubernetes.Interface
	// Reader reads the pod: the process's informer cache in `inplace
	// run`; nil reads through Client (a GET each time).
	Reader kube.Reader
	// Guard confirms each plan before the pod is written; required.
	Guard Guard
	// Recorder records Kubernetes Events on the pod; nil records none.
	Recorder record.EventRecorder
	Log      *slog.Logger
	Clock    clock.PassiveClock
	// Slices reads the EndpointSlices holding the pod (the process's
	// informer cache in `inplace run`); nil lists them through Client.
	Slices kube.SliceReader
	// Changes wakes a delivery waiting on a pod (draining, or busy with
	// another upgrade) at the pod's next change or its EndpointSlices'
	// (WatchPods, WatchSlices): the delivery then decides again at once,
	// within its deadline. Nil: it answers "not yet" and the bus
	// redelivers it after the delays below.
	Changes Changes
	// Waiters bounds the deliveries waiting in-process at once (the
	// others answer "not yet" and poll), below the runner's workers so
	// they stay free for other pods; default 2.
	Waiters int
	// BusyRecheck is how soon a pod with another upgrade under way is
	// tried again; default 2s, or with Changes 10s (a safety net: that
	// upgrade's end, verify's or a rollback's last write, changes the pod
	// and wakes the delivery).
	BusyRecheck time.Duration
	// DrainRecheck is how soon a gated pod is looked at again while it
	// leaves service; default 250ms, or with Changes 10s (a safety net for a lost
	// wake-up: the watch moves it). DrainTimeout bounds that wait (from
	// the gate going False); past it the upgrade is refused; default 60s.
	DrainRecheck, DrainTimeout time.Duration
	// Restarts counts the containers restarted on purpose (restart
	// requests), by namespace, pod and container; nil counts none.
	Restarts *prometheus.CounterVec
	// Leases hold a pod for one replica at a time (bus.Leases); nil: the
	// per-pod lock of this process only.
	Leases Leases
}

// Leases hold a pod for one replica of a function at a time; a pod held
// by another replica is ErrHeld (bus.Leases).
type Leases = bus.LeaseTaker

// Function is the patch-pod function.
type Function struct {
	d Deps
	// pods is one decision at a time per pod: two deliveries of one plan
	// (a redelivery, a replay) never drain and patch together.
	pods keylock.Locks
	// waiters are the slots of the deliveries waiting in-process.
	waiters chan struct{}
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
	if d.Slices == nil {
		d.Slices = kube.Live{Client: d.Client}
	}
	if d.BusyRecheck <= 0 {
		d.BusyRecheck = 2 * time.Second
		if d.Changes != nil {
			d.BusyRecheck = watchedRecheck
		}
	}
	if d.DrainRecheck <= 0 {
		d.DrainRecheck = 250 * time.Millisecond
		if d.Changes != nil {
			d.DrainRecheck = watchedRecheck
		}
	}
	if d.DrainTimeout <= 0 {
		d.DrainTimeout = time.Minute
	}
	if d.Waiters <= 0 {
		d.Waiters = 2
	}
	return &Function{d: d, waiters: make(chan struct{}, d.Waiters)}
}

// Name implements runner.Function.
func (f *Function) Name() string { return Name }

// Types implements runner.Function.
func (f *Function) Types() []string { return []string{events.ImagePrepulled} }

// Handle drains the pod if it has the gate, then patches its images.
// While the pod drains or is busy with another upgrade, it waits for the
// pod's next change (Changes) or the time the decision can next change
// by itself (the grace's end, a deadline, a safety-net recheck) and
// decides again, within the delivery's deadline; past it, the bus
// redelivers.
func (f *Function) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	d, err := events.AsIn[events.PrepulledData](ctx, e)
	if err != nil {
		return nil, err
	}
	s := step{f: f, in: e, plan: d.Plan}
	key := d.Plan.Pod.Namespace + "/" + d.Plan.Pod.Name
	defer f.pods.Lock(key)()
	release, err := bus.TakeLease(ctx, f.d.Leases, Name, d.Plan.Pod.UID)
	if err != nil {
		return nil, err
	}
	defer release()
	for {
		woken, stop := f.changed(key) // before reading, so no change is missed
		outs, err := s.decide(ctx)
		again := f.pause(ctx, woken, err)
		stop()
		if !again {
			return outs, err
		}
	}
}

// decide takes the next step, reading the pod again after a failed
// precondition.
func (s *step) decide(ctx context.Context) ([]cloudevents.Event, error) {
	for range attempts {
		outs, err := s.attempt(ctx)
		if !errors.Is(err, errAgain) {
			return outs, err
		}
	}
	return nil, fmt.Errorf("patch pod %s: it kept changing while being patched", s.plan.Pod)
}

// errAgain: the pod changed under the attempt; read it again.
var errAgain = errors.New("pod changed; read it again")

// step is one delivery's work on one plan.
type step struct {
	f    *Function
	in   cloudevents.Event
	plan events.Plan
}

// attempt reads the pod and takes the next step: report, drain, or patch.
func (s *step) attempt(ctx context.Context) ([]cloudevents.Event, error) {
	pod, err := s.f.d.Reader.Pod(ctx, s.plan.Pod.Namespace, s.plan.Pod.Name)
	switch {
	case apierrors.IsNotFound(err):
		return s.failed(inplace.ReasonPodDeleted, "the pod is gone")
	case err != nil:
		return nil, fmt.Errorf("patch pod %s: get: %w", s.plan.Pod, err)
	case string(pod.UID) != s.plan.Pod.UID:
		return s.failed(inplace.ReasonPodReplaced, fmt.Sprintf("the pod has uid %s, not the planned %s: it was replaced", pod.UID, s.plan.Pod.UID))
	case pod.DeletionTimestamp != nil:
		return s.failed(inplace.ReasonPodDeleted, "the pod is being deleted")
	}
	if s.plan.Resize != nil {
		return s.resize(ctx, pod)
	}
	st, err := inplace.ParseState(pod)
	if err == nil && st != nil && st.UpgradeID == s.plan.UpgradeID {
		return s.patched(pod.ResourceVersion, st.PatchedAt) // a redelivery: report it again, write nothing
	}
	now := s.f.d.Clock.Now()
	patch, err := inplace.Patch(pod, s.plan, now)
	if errors.Is(err, inplace.ErrBusy) {
		if !s.over(ctx, pod, st) {
			return nil, onWatch(settle.NotYet(s.f.d.BusyRecheck, "%v", err))
		}
		// The record has the pod under this upgrade, so the one before
		// ended (a success on the bus and in the record leaves its state
		// Patched; the pod has crashed or changed since).
		patch, err = inplace.PatchOver(pod, s.plan, now)
	}
	// Every path below may write the pod: the plan must be compute-spec's.
	if r, err := s.confirm(ctx, pod); err != nil || r != nil {
		if err != nil {
			return nil, err
		}
		return s.withdraw(ctx, pod, r)
	}
	switch {
	case errors.Is(err, inplace.ErrAlreadyApplied):
		return s.upToDate(ctx, pod)
	case err != nil:
		return s.refused(ctx, pod, inplace.ReasonChangedByOthers, err.Error())
	}
	if inplace.HasGate(pod) {
		var nd errNotDrained
		switch written, err := s.drain(ctx, pod, now); {
		case errors.As(err, &nd):
			return s.refused(ctx, pod, ReasonNotDrained, nd.msg)
		case err != nil:
			return nil, err
		case written != nil:
			// The gate just went False and the patch may follow at once:
			// build it on the pod that write returned.
			now = s.f.d.Clock.Now()
			if patch, err = inplace.Patch(written, s.plan, now); err != nil {
				return nil, errAgain
			}
			pod = written
		}
	}
	if patch, err = s.labelAhead(ctx, pod, patch); err != nil {
		return nil, err
	}
	return s.send(ctx, pod, patch, now)
}

// send writes the patch and reports it.
func (s *step) send(ctx context.Context, pod *corev1.Pod, patch []byte, now time.Time) ([]cloudevents.Event, error) {
	out, err := s.f.d.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	switch {
	case inplace.PreconditionFailed(err), apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil, errAgain
	case apierrors.IsInvalid(err):
		return s.refused(ctx, pod, ReasonPatchRejected, err.Error())
	case err != nil:
		return nil, fmt.Errorf("patch pod %s: %w", s.plan.Pod, err)
	}
	s.f.d.Reader.Wrote(out)
	if s.plan.Restart != nil {
		s.restarting(out)
	} else if !s.plan.StepEvents { // else one Event on the workload for the step (compute-spec)
		for _, c := range s.plan.Containers {
			s.f.d.Recorder.Eventf(out, corev1.EventTypeNormal, EventUpgrade, "Upgrading container %s in place to image %q (upgrade %s)",
				c.Name, c.ToImage, s.plan.UpgradeID)
		}
	}
	s.f.d.Log.Info("pod patched", "pod", s.plan.Pod.String(), "upgrade", s.plan.UpgradeID, "resourceVersion", out.ResourceVersion)
	return s.patched(out.ResourceVersion, now)
}
