package computespec

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/keylock"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Name is the function's name and its consumer's.
const Name = "compute-spec"

// Cache is what compute-spec reads from the cluster (kube.Cache).
type Cache interface {
	PodsUsingRepository(name string) ([]*corev1.Pod, error)
	OwnerOf(pod *corev1.Pod) (kube.Workload, bool, error)
	Get(ref events.ObjectRef) (kube.Workload, bool, error)
	PodsOf(ref events.ObjectRef) ([]*corev1.Pod, error)
}

// Store holds rollout state with compare-and-swap (bus.KV).
type Store interface {
	Get(ctx context.Context, key string) ([]byte, uint64, error)
	Update(ctx context.Context, key string, fn func(old []byte) ([]byte, error)) ([]byte, error)
	Keys(ctx context.Context) ([]string, error)
}

// Defaults gives the current configuration (config.Store).
type Defaults interface{ Load() config.Defaults }

// Deps are what the function needs.
type Deps struct {
	Cache    Cache
	Store    Store
	Defaults Defaults
	// Syncer brings a workload's template along when its pods all run the
	// target; nil leaves templates alone.
	Syncer Syncer
	// Recorder records Warning Events on workloads a push is refused for;
	// nil records none.
	Recorder record.EventRecorder
	// OptIn keeps the owners the admission policy lets the functions
	// write pods of; nil keeps none (no policy installed, dry runs).
	OptIn OptIn
	Log   *slog.Logger
	Now   func() time.Time
	// Watchdog overrides config-inplace's watchdog settings where non-zero
	// (see Sweep).
	Watchdog planner.Watchdog
	// Signatures verifies pushed digests for workloads that require a
	// signature; nil refuses every push to such a workload.
	Signatures SignatureVerifier
	// Pulls shows the nodes' pulls: with it, a pod of a rollout that
	// pre-pulls is planned only once its node has the images (pre-pull
	// starts every node's pull ahead, at the rollout's start). Nil plans
	// pods with their node's pull still to come (nothing pulls ahead, as in
	// Knative mode).
	Pulls Pulls
	// Records wakes a delivery waiting for another worker's change of a
	// rollout record (a template sync under way); nil: it is redelivered
	// after pollRecheck instead.
	Records *RecordChanges
	// Decoded shares decoded records by revision with the process's other
	// readers (the guards); nil decodes each read.
	Decoded *rollout.Decoded
	// Pods reads the pod an outcome is about before the outcome is
	// recorded (the process's kube.Reader); nil: Cache.PodsOf. Fresh reads
	// it from the API server when that contradicts the outcome; nil: the
	// cache's word is final.
	Pods, Fresh PodReader
	// Dates dates a push that carries no time by its image's creation, as
	// the registry says, before the never-backwards check; nil judges such
	// a push on what it carries.
	Dates ImageDater
}

// Function is compute-spec.
type Function struct {
	d       Deps
	commits commits
	// syncs holds one template sync at a time per workload.
	syncs keylock.Locks
	plans planner.Memo
	dated dateCache
}

// New returns compute-spec.
func New(d Deps) *Function {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Function{d: d}
}

// Name implements runner.Function.
func (f *Function) Name() string { return Name }

// Types implements runner.Function.
func (f *Function) Types() []string {
	return []string{events.ImagePushed, events.UpgradeRequested, events.UpgradeSucceeded, events.UpgradeFailed,
		events.UpgradeRolledBack, events.RolloutResumed, events.UpgradeApproved, events.UpgradeRejected,
		events.ContainerRestartRequested, events.ContainerResizeRequested}
}

// Handle implements runner.Function.
func (f *Function) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	switch e.Type() {
	case events.ImagePushed:
		return f.onPush(ctx, e)
	case events.UpgradeRequested:
		return f.onRequest(ctx, e)
	case events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack:
		return f.onOutcome(ctx, e)
	case events.RolloutResumed:
		return f.onResume(ctx, e)
	case events.UpgradeApproved, events.UpgradeRejected:
		return f.onDecision(ctx, e)
	case events.ContainerRestartRequested:
		return f.onRestart(ctx, e)
	case events.ContainerResizeRequested:
		return f.onResize(ctx, e)
	}
	return nil, settle.Permanentf("compute-spec: event type %s is not one it takes", e.Type())
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("compute-spec: %s: %w", op, err)
}
