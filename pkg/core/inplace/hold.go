package inplace

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A StatefulSet is held from a rollout's first plan: partition = replicas
// (a RollingUpdate strategy), and the revision its template sync will make
// recorded with the hold (StatefulSetHoldPatch). While the controller shows
// it observed the hold, patch-pod sets each pod's controller-revision-hash
// to that revision in the same write as its images (HeldRevision), so the
// sync has no pod to relabel: three writes per gated pod, not four. The
// controller replaces no pod below the partition whatever its label, so a
// pod labelled ahead of the template is safe only while the hold stands;
// the sync takes the hold over (syncBase) and restores the strategy it
// recorded, and a rollout that ends without a sync releases it
// (StatefulSetRestorePatch) after relabelling the pods back.

// PodIndexLabel is the label the StatefulSet controller puts on each pod
// with its ordinal.
const PodIndexLabel = "apps.kubernetes.io/pod-index"

// StatefulSetHoldPatch holds sts for the rollout upgradeID, whose template
// sync will make the ControllerRevision revision: the hold record (with
// the strategy before, unless an earlier hold recorded it) and, for a
// RollingUpdate StatefulSet, partition = replicas. It tests the UID and
// the resourceVersion the decision was made from. ErrAlreadyApplied when
// sts is held so already; ErrBusy while a template sync (not a hold) is
// recorded.
func StatefulSetHoldPatch(sts *appsv1.StatefulSet, upgradeID, revision string) ([]byte, error) {
	old, err := ParseSyncRecord(sts.ObjectMeta)
	if err != nil {
		return nil, err
	}
	if old != nil && !old.Hold {
		return nil, fmt.Errorf("hold %s/%s: template sync of upgrade %s is not restored yet: %w", sts.Namespace, sts.Name, old.UpgradeID, ErrBusy)
	}
	rolling := sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	if old != nil && old.UpgradeID == upgradeID && old.Revision == revision && (!rolling || partitionHolds(sts)) {
		return nil, fmt.Errorf("hold %s/%s: %w", sts.Namespace, sts.Name, ErrAlreadyApplied)
	}
	rec := SyncRecord{UpgradeID: upgradeID, Hold: true, Revision: revision}
	switch {
	case old != nil && old.StatefulSetStrategy != nil:
		rec.StatefulSetStrategy = old.StatefulSetStrategy
	case rolling:
		rec.StatefulSetStrategy = sts.Spec.UpdateStrategy.DeepCopy()
	}
	ops := []op{testOp("/metadata/uid", string(sts.UID)), testOp("/metadata/resourceVersion", sts.ResourceVersion)}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode hold record: %w", err)
	}
	ops = append(ops, setKeyOps("", "/metadata/annotations", sts.Annotations, SyncAnnotation, string(b))...)
	if rolling {
		ops = append(ops, addOp("/spec/updateStrategy", partitioned(sts)))
	}
	return marshal(ops)
}

// HeldRevision is the revision patch-pod sets on pod in its image write
// for the rollout upgradeID: sts's hold record names that rollout, the
// controller observed the generation that set it, and (RollingUpdate) the
// pod's ordinal is below a partition of at least replicas, so the
// controller leaves the pod alone whatever its label. Otherwise false: the
// pod keeps its label and the template sync relabels it.
func HeldRevision(sts *appsv1.StatefulSet, pod *corev1.Pod, upgradeID string) (string, bool) {
	rec, err := ParseSyncRecord(sts.ObjectMeta)
	if err != nil || rec == nil || !rec.Hold || rec.UpgradeID != upgradeID || !revisionOf(sts, rec.Revision) {
		return "", false
	}
	if sts.Status.ObservedGeneration < sts.Generation {
		return "", false
	}
	if sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return rec.Revision, true
	}
	if !partitionHolds(sts) {
		return "", false
	}
	n, ok := PodOrdinal(sts, pod)
	if !ok || n >= int(*sts.Spec.UpdateStrategy.RollingUpdate.Partition) {
		return "", false
	}
	return rec.Revision, true
}

// revisionOf: name can be a ControllerRevision of sts ("<name>-<hash>")
// and a label value: the record is an annotation anyone who may edit the
// StatefulSet can write, and a value the API server refuses would have
// patch-pod's image write refused with it.
func revisionOf(sts *appsv1.StatefulSet, name string) bool {
	hash, ok := strings.CutPrefix(name, sts.Name+"-")
	return ok && hash != "" && len(validation.IsValidLabelValue(name)) == 0
}

// partitionHolds: a RollingUpdate partition of at least replicas.
func partitionHolds(sts *appsv1.StatefulSet) bool {
	ru := sts.Spec.UpdateStrategy.RollingUpdate
	if ru == nil || ru.Partition == nil {
		return false
	}
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	return *ru.Partition >= replicas
}

// PodOrdinal is the StatefulSet ordinal of pod: its pod-index label, else
// the number after "<sts name>-".
func PodOrdinal(sts *appsv1.StatefulSet, pod *corev1.Pod) (int, bool) {
	s, ok := pod.Labels[PodIndexLabel]
	if !ok {
		s, ok = strings.CutPrefix(pod.Name, sts.Name+"-")
	}
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// RevisionOps adds to a pod patch (which tests the pod's UID already) the
// label controller-revision-hash = revision, tested as read first (its
// value, or its or the labels' absence), so a label set meanwhile is not
// overwritten.
func RevisionOps(body []byte, pod *corev1.Pod, revision string) ([]byte, error) {
	var ops []op
	if err := json.Unmarshal(body, &ops); err != nil {
		return nil, fmt.Errorf("decode pod patch: %w", err)
	}
	ops = append(ops, keyGuardOps("/metadata/labels", pod.Labels, RevisionLabel)...)
	return marshal(append(ops, setKeyOps("", "/metadata/labels", pod.Labels, RevisionLabel, revision)...))
}
