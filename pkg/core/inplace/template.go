package inplace

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// TemplateImages maps each container and init container name of spec to its
// image.
func TemplateImages(spec corev1.PodSpec) map[string]string {
	m := make(map[string]string, len(spec.Containers)+len(spec.InitContainers))
	for _, c := range spec.InitContainers {
		m[c.Name] = c.Image
	}
	for _, c := range spec.Containers {
		m[c.Name] = c.Image
	}
	return m
}

// SyncRecord is kept in a workload's inplace.dev/template-sync annotation
// from the sync patch to the restore patch: what the sync changed, so that
// a crash in between can always be undone, and the images before it
// (`kubectl rollout undo` cannot return to them afterwards).
type SyncRecord struct {
	UpgradeID      string            `json:"upgradeID"`
	PreviousImages map[string]string `json:"previousImages"`
	// Paused is the Deployment's spec.paused before the sync.
	Paused *bool `json:"paused,omitempty"`
	// StatefulSetStrategy / DaemonSetStrategy is the update strategy before
	// the sync; nil when the sync did not change it.
	StatefulSetStrategy *appsv1.StatefulSetUpdateStrategy `json:"statefulSetStrategy,omitempty"`
	DaemonSetStrategy   *appsv1.DaemonSetUpdateStrategy   `json:"daemonSetStrategy,omitempty"`
	// TemplateGeneration is a DaemonSet's template generation before the
	// sync: its pods are labelled with the next one first.
	TemplateGeneration *int64 `json:"templateGeneration,omitempty"`
	// Hold marks a StatefulSet held (partition = replicas) from a
	// rollout's first plan, before its sync (hold.go): Revision is the
	// ControllerRevision the sync will make, which patch-pod sets on each
	// pod in its image write. A sync, or the next hold, takes the record
	// over, keeping the strategy it recorded.
	Hold     bool   `json:"hold,omitempty"`
	Revision string `json:"revision,omitempty"`
}

// ParseSyncRecord reads the workload's inplace.dev/template-sync annotation;
// nil when absent.
func ParseSyncRecord(meta metav1.ObjectMeta) (*SyncRecord, error) {
	raw, ok := meta.Annotations[SyncAnnotation]
	if !ok {
		return nil, nil
	}
	var r SyncRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil || r.UpgradeID == "" {
		return nil, settle.Permanentf("%s/%s: annotation %s: not a template-sync record: %q", meta.Namespace, meta.Name, SyncAnnotation, raw)
	}
	return &r, nil
}

// syncBase starts a sync patch: the UID test and, unless this upgrade's
// record is already there (a repeated step after a crash keeps the record
// of the first attempt, not of its own half-applied state), the record.
// recorded tells the caller whether a record already exists.
// The change-cause (kubectl's) is set with the record when cause is set.
func syncBase(meta metav1.ObjectMeta, rec SyncRecord, cause string) (ops []op, recorded bool, err error) {
	ops = []op{testOp("/metadata/uid", string(meta.UID))}
	old, err := ParseSyncRecord(meta)
	switch {
	case err != nil:
		return nil, false, err
	case old != nil && old.UpgradeID == rec.UpgradeID && !old.Hold:
		return ops, true, nil
	case old != nil && old.Hold:
		// A rollout's hold: the sync takes it over, with the strategy it
		// recorded before holding (the one the restore puts back).
		if old.StatefulSetStrategy != nil {
			rec.StatefulSetStrategy = old.StatefulSetStrategy
		}
		ops = append(ops, testOp("/metadata/annotations/"+escape(SyncAnnotation), meta.Annotations[SyncAnnotation]))
	case old != nil:
		return nil, false, fmt.Errorf("sync %s/%s: template sync of upgrade %s is not restored yet: %w", meta.Namespace, meta.Name, old.UpgradeID, ErrBusy)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, false, fmt.Errorf("encode sync record: %w", err)
	}
	set := map[string]string{SyncAnnotation: string(b)}
	if cause != "" {
		set[ChangeCauseAnnotation] = cause
	}
	return append(ops, setKeysOps(meta.ResourceVersion, "/metadata/annotations", meta.Annotations, set)...), false, nil
}

// imageOps tests every named container's current template image and
// replaces those that differ from the wanted image. A container missing
// from the template is a permanent error.
func imageOps(spec *corev1.PodSpec, images map[string]string) ([]op, error) {
	var ops []op
	for _, name := range slices.Sorted(maps.Keys(images)) {
		c, ok := findContainer(spec, "/spec/template/spec", name)
		if !ok {
			return nil, settle.Permanentf("template has no container %q", name)
		}
		ops = append(ops, testOp(c.Path+"/image", c.Image))
		if c.Image != images[name] {
			ops = append(ops, replaceOp(c.Path+"/image", images[name]))
		}
	}
	return ops, nil
}

// templateChange makes the ops that change a workload's pod template (at
// /spec/template/spec): its images for an upgrade, its resources for a
// resize. Each sync patch builder takes one, so both share the guards, the
// record and the freeze of the kind.
type templateChange func(spec *corev1.PodSpec) ([]op, error)

// imagesTo is the template change of an upgrade.
func imagesTo(images map[string]string) templateChange {
	return func(spec *corev1.PodSpec) ([]op, error) { return imageOps(spec, images) }
}

// syncRecord is an upgrade's record: its ID and the template's images before.
func syncRecord(upgradeID string, spec corev1.PodSpec, images map[string]string) SyncRecord {
	return SyncRecord{UpgradeID: upgradeID, PreviousImages: previousImages(spec, images)}
}

// replaces reports whether ops change anything (not only test it).
func replaces(ops []op) bool {
	return slices.ContainsFunc(ops, func(o op) bool { return o.Op != "test" })
}

// previousImages is the template's current image of each named container.
func previousImages(spec corev1.PodSpec, images map[string]string) map[string]string {
	all, prev := TemplateImages(spec), map[string]string{}
	for name := range images {
		prev[name] = all[name]
	}
	return prev
}

// restoreBase starts a restore patch: the UID and record tests and the
// record's removal; ErrAlreadyApplied when there is no record.
func restoreBase(meta metav1.ObjectMeta) ([]op, *SyncRecord, error) {
	rec, err := ParseSyncRecord(meta)
	if err != nil {
		return nil, nil, err
	}
	if rec == nil {
		return nil, nil, fmt.Errorf("restore %s/%s: no %s: %w", meta.Namespace, meta.Name, SyncAnnotation, ErrAlreadyApplied)
	}
	path := "/metadata/annotations/" + escape(SyncAnnotation)
	return []op{
		testOp("/metadata/uid", string(meta.UID)),
		testOp(path, meta.Annotations[SyncAnnotation]),
		removeOp(path),
	}, rec, nil
}
