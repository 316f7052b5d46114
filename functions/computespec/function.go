package computespec

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Name is the function's name and its consumer's.
const Name = controller.Name

// Cache is what compute-spec reads from the cluster (kube.Cache).
type Cache interface {
	PodsUsingRepository(name string) ([]*corev1.Pod, error)
	OwnerOf(pod *corev1.Pod) (kube.Workload, bool, error)
	Get(ref events.ObjectRef) (kube.Workload, bool, error)
	PodsOf(ref events.ObjectRef) ([]*corev1.Pod, error)
}

// Deps are what the function needs.
type Deps struct {
	Cache    Cache
	Store    controller.Store
	Defaults controller.Defaults
	// Recorder records Warning Events on workloads a push is refused for;
	// nil records none.
	Recorder record.EventRecorder
	Log      *slog.Logger
	Now      func() time.Time
	// Signatures verifies pushed digests for workloads that require a
	// signature; nil refuses every push to such a workload.
	Signatures SignatureVerifier
	// Dates dates a push that carries no time by its image's creation, as
	// the registry says, before the never-backwards check; nil judges such
	// a push on what it carries.
	Dates ImageDater
}

// Function is compute-spec.
type Function struct {
	d     Deps
	ro    *controller.Rollouts
	dated dateCache
}

// New returns compute-spec beside its rollout controller ro, which plans
// and drives the rollouts the function begins, and takes their outcomes,
// resumes and decisions.
func New(ro *controller.Rollouts, d Deps) *Function {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Function{d: d, ro: ro}
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
	case events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack,
		events.RolloutResumed, events.UpgradeApproved, events.UpgradeRejected:
		return f.ro.Handle(ctx, e)
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
