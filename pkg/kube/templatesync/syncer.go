package templatesync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Steps of a sync, in order.
const (
	StepStart      = ""
	StepFrozen     = "frozen"     // template set (with paused or partition)
	StepReplicaSet = "replicaset" // Deployment: current ReplicaSet template set
	StepRevision   = "revision"   // StatefulSet/DaemonSet: new revision known
	StepRelabeled  = "relabeled"  // pods carry the new revision
	StepRestored   = "restored"   // paused/partition/strategy put back
	StepDone       = "done"
)

// Syncer talks to the API server for compute-spec's template sync.
type Syncer struct {
	Client   kubernetes.Interface
	Recorder record.EventRecorder
	Log      *slog.Logger
	Now      func() time.Time
}

// Sync does the next step of r's template sync, from r.Sync.
func (s *Syncer) Sync(ctx context.Context, r *rollout.Rollout) (rollout.Sync, bool, error) {
	p := rollout.Sync{}
	if r.Sync != nil {
		p = *r.Sync
	}
	if p.Step == StepDone {
		return p, true, nil
	}
	var err error
	kind := r.Workload.Kind
	if r.Resize != nil && kind != "Pod" {
		kind = "resize" // resources, not images (resize.go)
	}
	switch kind {
	case "resize":
		err = s.resizeSync(ctx, r, &p)
	case "Deployment":
		err = s.deployment(ctx, r, &p)
	case "StatefulSet":
		err = s.statefulSet(ctx, r, &p)
	case "DaemonSet":
		err = s.daemonSet(ctx, r, &p)
	case "ReplicaSet":
		err = s.replicaSet(ctx, r, &p)
	default:
		p.Step, p.Result, p.Note = StepDone, events.TemplateNone, "a bare pod has no template"
	}
	if kind == "StatefulSet" && (errors.Is(err, errNotSynced) || errors.Is(err, errGitOps)) {
		if rerr := s.Release(ctx, r); rerr != nil {
			return p, false, rerr // the sync ends only once the StatefulSet is released
		}
	}
	switch {
	case errors.Is(err, errNotSynced):
		s.event(r, corev1.EventTypeWarning, EventNotSynced, p.Note)
		p.Step, err = StepDone, nil
	case errors.Is(err, errGitOps):
		s.event(r, corev1.EventTypeWarning, EventLeftToGitOps, p.Note)
		p.Step, err = StepDone, nil
	}
	return p, p.Step == StepDone, err
}

// Event reasons on the workload.
const (
	EventSynced       = "InPlaceTemplateSynced"
	EventNotSynced    = "InPlaceTemplateNotSynced"
	EventLeftToGitOps = "InPlaceTemplateLeftToGitOps"
)

// Reasons a template is not synced (rollout.Sync.Reason).
const (
	ReasonWorkloadDeleted = "WorkloadDeleted"
	ReasonRolloutUnderWay = "RolloutUnderWay"
	ReasonPodsNotOnTarget = "PodsNotOnTarget"
)

// errNotSynced: the workload's own state forbids a safe sync; p.Note says why.
var errNotSynced = errors.New("template not synced")

// notSynced records on p that the template is left as is, and why, and
// returns errNotSynced.
func notSynced(p *rollout.Sync, reason, format string, args ...any) error {
	p.Result, p.Reason, p.Note = events.TemplateNotSynced, reason, fmt.Sprintf(format, args...)
	return errNotSynced
}

// waiting is the error of a step that waits for a controller.
func waiting(format string, args ...any) error {
	return settle.NotYet(time.Second, format, args...)
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// patchFunc is a typed client's Patch method.
type patchFunc[T any] func(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (T, error)

// sendBuilt sends the JSON patch body a patch builder returned, with the
// builder's error buildErr: a builder's ErrAlreadyApplied sends nothing, any
// other builder error is returned as is. A failed precondition means the
// object changed under us, so it is retried by the runner (after a fresh read).
func sendBuilt[T any](ctx context.Context, patch patchFunc[T], name string, body []byte, buildErr error) error {
	_, err := sendBuiltResult(ctx, patch, name, body, buildErr)
	return err
}

// patchError classifies a failed patch: gone is permanent; a failed
// precondition means the object changed between our read and our write,
// so it is read again.
func patchError(name string, body []byte, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return settle.Permanentf("%s is gone: %w", name, err)
	case inplace.PreconditionFailed(err):
		return waiting("%s changed while patching it; reading it again", name)
	}
	return fmt.Errorf("patch %s with %.300s: %w", name, body, err)
}

// sendBuiltResult is sendBuilt that also returns the object the patch left
// (the zero value when there was nothing to patch).
func sendBuiltResult[T any](ctx context.Context, patch patchFunc[T], name string, body []byte, buildErr error) (T, error) {
	var zero T
	if errors.Is(buildErr, inplace.ErrAlreadyApplied) {
		return zero, nil
	}
	if buildErr != nil {
		return zero, buildErr
	}
	out, err := patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "inplace"})
	if err != nil {
		return zero, patchError(name, body, err)
	}
	return out, nil
}

// finish records the previous images on the workload (meta is its
// current metadata) and in an Event.
func finish[T any](ctx context.Context, s *Syncer, r *rollout.Rollout, p *rollout.Sync, meta metav1.ObjectMeta, patch patchFunc[T]) error {
	hist, err := withPrevious(meta.Annotations[PreviousImagesAnnotation],
		Previous{UpgradeID: r.UpgradeID, Images: p.PreviousImages, SyncedAt: s.now().UTC()})
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{PreviousImagesAnnotation: hist}}})
	if err != nil {
		return err
	}
	if _, err := patch(ctx, r.Workload.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "inplace"}); err != nil {
		return fmt.Errorf("record previous images on %s: %w", r.Workload, err)
	}
	s.event(r, corev1.EventTypeNormal, EventSynced, syncedMessage(r, p))
	p.Step, p.Result = StepDone, events.TemplateSynced
	return nil
}

// cause is the change-cause recorded with the template: what `kubectl
// rollout history` shows for the revision the sync makes.
func cause(r *rollout.Rollout, images map[string]string) string {
	if r.Push.Undo != "" {
		return fmt.Sprintf("inplace undo of %s (upgrade %s): %s in place, without a rollout", r.Push.Undo, r.UpgradeID, describe(images))
	}
	return fmt.Sprintf("inplace upgrade %s: %s in place, without a rollout", r.UpgradeID, describe(images))
}

func (s *Syncer) event(r *rollout.Rollout, typ, reason, msg string) {
	if s.Log != nil {
		s.Log.Info("template sync", "workload", r.Workload.String(), "reason", reason, "message", msg)
	}
	if s.Recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{Kind: r.Workload.Kind, APIVersion: "apps/v1", Namespace: r.Workload.Namespace,
		Name: r.Workload.Name, UID: types.UID(r.Workload.UID)}
	s.Recorder.Event(ref, typ, reason, msg)
}
