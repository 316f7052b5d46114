package templatesync

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// targetImages are the images the template must show, by container: what
// the rollout's pods were moved to (every live pod must run them), or, when
// no pod needed moving, what the pods run for the pushed repository.
func targetImages(r *rollout.Rollout, pods []corev1.Pod) (map[string]string, error) {
	want := map[string]string{}
	for _, p := range r.Pods {
		if p.State == rollout.Succeeded {
			for _, c := range p.Containers {
				want[c.Name] = c.ToImage
			}
		}
	}
	live := 0
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		live++
		specs := inplace.TemplateImages(pod.Spec)
		if len(want) == 0 {
			for name, img := range specs {
				if imageref.SameRepository(img, r.Push.Name()) {
					want[name] = img
				}
			}
		}
		for name, img := range want {
			if specs[name] != img {
				return nil, fmt.Errorf("pod %s runs %s in %s, not %s", pod.Name, specs[name], name, img)
			}
		}
	}
	if live == 0 || len(want) == 0 {
		return nil, fmt.Errorf("no live pod shows the target images")
	}
	return want, nil
}

// previous is the template's image of each container in images before the
// sync: from the workload's sync record when a first attempt already
// patched it (a crash), else from the template as it is.
func previous(meta metav1.ObjectMeta, spec corev1.PodSpec, upgradeID string, images map[string]string) map[string]string {
	if rec, err := inplace.ParseSyncRecord(meta); err == nil && rec != nil && rec.UpgradeID == upgradeID && !rec.Hold {
		return rec.PreviousImages
	}
	all, prev := inplace.TemplateImages(spec), map[string]string{}
	for name := range images {
		prev[name] = all[name]
	}
	return prev
}

// shows reports whether the template already has every image.
func shows(spec corev1.PodSpec, images map[string]string) bool {
	all := inplace.TemplateImages(spec)
	for name, img := range images {
		if all[name] != img {
			return false
		}
	}
	return true
}

// podsOf lists the pods matching a workload's selector.
func (s *Syncer) podsOf(ctx context.Context, ns string, sel *metav1.LabelSelector) ([]corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	list, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// begin is the first step every kind shares: the images to set (what the
// pods run), the images before, and whether the template already shows
// them (then the sync is done: nothing to change).
func (s *Syncer) begin(ctx context.Context, r *rollout.Rollout, p *rollout.Sync, meta metav1.ObjectMeta,
	spec corev1.PodSpec, sel *metav1.LabelSelector) (done bool, err error) {
	pods, err := s.podsOf(ctx, meta.Namespace, sel)
	if err != nil {
		return false, err
	}
	images, err := targetImages(r, pods)
	if err != nil {
		return false, notSynced(p, ReasonPodsNotOnTarget, "template left as is: %v", err)
	}
	images = styled(images, r.Options.TemplateReference)
	p.Images, p.PreviousImages = images, previous(meta, spec, r.UpgradeID, images)
	if shows(spec, images) && meta.Annotations[inplace.SyncAnnotation] == "" {
		p.Step, p.Result, p.Note = StepDone, events.TemplateCurrent, "the template already shows the target"
		return true, nil
	}
	if err := s.gitOps(r, p, meta); err != nil {
		return false, err
	}
	return false, nil
}

// styled writes the images in the workload's reference style: as the pods
// run them (tag@digest), or by tag alone ("tag"), which a manifest in Git
// usually has. An image pinned by digest alone keeps it.
func styled(images map[string]string, style string) map[string]string {
	if style != policy.ReferenceTag {
		return images
	}
	out := make(map[string]string, len(images))
	for name, img := range images {
		out[name] = tagOnly(img)
	}
	return out
}

// tagOnly cuts the digest off "repo:tag@sha256:…" (not off "repo@sha256:…").
func tagOnly(img string) string {
	name, _, pinned := strings.Cut(img, "@")
	if pinned && strings.LastIndex(name, ":") > strings.LastIndex(name, "/") {
		return name
	}
	return img
}
