package controller

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/keylock"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/planner"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Name is the identity the controller runs and publishes as: compute-spec's,
// whose consumer delivers the outcomes, resumes and decisions it records.
const Name = "compute-spec"

// Cache is what the controller reads from the cluster (kube.Cache).
type Cache interface {
	Get(ref events.ObjectRef) (kube.Workload, bool, error)
	PodsOf(ref events.ObjectRef) ([]*corev1.Pod, error)
}

// Store holds rollout state with compare-and-swap (bus.KV).
type Store interface {
	Get(ctx context.Context, key string) ([]byte, uint64, error)
	Update(ctx context.Context, key string, fn func(old []byte) ([]byte, error)) ([]byte, error)
	Keys(ctx context.Context) ([]string, error)
}

// RecordReader reads rollout records from a copy that may lag a write
// (Get) or past it (Fresh): bus.Watched.
type RecordReader interface {
	Get(ctx context.Context, key string) ([]byte, uint64, error)
	Fresh(ctx context.Context, key string) ([]byte, uint64, error)
}

// Defaults gives the current configuration (config.Store).
type Defaults interface{ Load() config.Defaults }

// Deps are what the controller needs.
type Deps struct {
	Cache    Cache
	Store    Store
	Defaults Defaults
	// Syncer brings a workload's template along when its pods all run the
	// target; nil leaves templates alone.
	Syncer Syncer
	// Recorder records Events on workloads and pods (approvals, refused
	// outcomes); nil records none.
	Recorder record.EventRecorder
	// OptIn keeps the owners the admission policy lets the functions
	// write pods of; nil keeps none (no policy installed, dry runs).
	OptIn OptIn
	Log   *slog.Logger
	Now   func() time.Time
	// Watchdog overrides config-inplace's watchdog settings where non-zero
	// (see Sweep).
	Watchdog planner.Watchdog
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
	// Reads reads the records compute-spec observes and confirms outcomes
	// on (bus.Watched: a watched copy, no round trip); nil reads Store.
	// Writes are compare-and-swaps on Store whatever Reads gave.
	Reads RecordReader
	// Measurer measures a canary analysis's queries (Prometheus); nil: a
	// rollout whose workload asks for an analysis halts inconclusive at
	// its first measurement, never promoted.
	Measurer Measurer
	// Pods reads the pod an outcome is about before the outcome is
	// recorded (the process's kube.Reader); nil: Cache.PodsOf. Fresh reads
	// it from the API server when that contradicts the outcome; nil: the
	// cache's word is final.
	Pods, Fresh PodReader
	// Workers is how many of its inputs are handled at once (the
	// consumer's workers); 0: unknown. A record's writer waits for more
	// changes to share its write (commits) no longer than until that many
	// have queued.
	Workers int
}

// Rollouts is the rollout controller: it owns the rollout records once a
// rollout has begun, and what is not one event's work.
type Rollouts struct {
	d       Deps
	commits commits
	// written is each key's last write of this process (a writtenRecord).
	written sync.Map
	// syncs holds one template sync at a time per workload.
	syncs keylock.Locks
	plans planner.Memo
	// encoder encodes the records written, each pod entry again only
	// when it changed.
	encoder rollout.Encoder
	// after requeues a workload's analysis (the Waker's AddAfter).
	after atomic.Pointer[func(events.ObjectRef, time.Duration)]
}

// New returns the rollout controller.
func New(d Deps) *Rollouts {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Rollouts{d: d, commits: commits{full: d.Workers}}
}

// Types are the events the controller takes (on compute-spec's consumer).
func (ctl *Rollouts) Types() []string {
	return []string{events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack,
		events.RolloutResumed, events.UpgradeApproved, events.UpgradeRejected}
}

// Handle records an outcome, a resume or an approver's decision in its
// rollout and returns what follows.
func (ctl *Rollouts) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	switch e.Type() {
	case events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack:
		return ctl.onOutcome(ctx, e)
	case events.RolloutResumed:
		return ctl.onResume(ctx, e)
	case events.UpgradeApproved, events.UpgradeRejected:
		return ctl.onDecision(ctx, e)
	}
	return nil, settle.Permanentf("compute-spec: event type %s is not one the rollout controller takes", e.Type())
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("compute-spec: %s: %w", op, err)
}
