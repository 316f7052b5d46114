package templatesync

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Tracking labels and annotations of the GitOps tools: what they stamp on
// every object they apply.
const (
	ArgoInstanceLabel        = "argocd.argoproj.io/instance"
	ArgoTrackingAnnotation   = "argocd.argoproj.io/tracking-id"
	FluxKustomizationLabel   = "kustomize.toolkit.fluxcd.io/name"
	FluxKustomizationNSLabel = "kustomize.toolkit.fluxcd.io/namespace"
	FluxHelmReleaseLabel     = "helm.toolkit.fluxcd.io/name"
	FluxHelmReleaseNSLabel   = "helm.toolkit.fluxcd.io/namespace"
)

// Reasons a template is left to a GitOps tool.
const (
	ReasonManagedByArgoCD = "ManagedByArgoCD"
	ReasonManagedByFlux   = "ManagedByFlux"
)

// Manager names the GitOps tool managing an object, from its tracking
// metadata: a CamelCase reason and a description, or "" when none does.
func Manager(meta metav1.ObjectMeta) (reason, who string) {
	l, a := meta.Labels, meta.Annotations
	switch {
	case a[ArgoTrackingAnnotation] != "":
		app, _, _ := strings.Cut(a[ArgoTrackingAnnotation], ":")
		return ReasonManagedByArgoCD, "Argo CD (application " + app + ")"
	case l[ArgoInstanceLabel] != "":
		return ReasonManagedByArgoCD, "Argo CD (application " + l[ArgoInstanceLabel] + ")"
	case l[FluxKustomizationLabel] != "":
		return ReasonManagedByFlux, "Flux (Kustomization " + qualified(l[FluxKustomizationNSLabel], l[FluxKustomizationLabel]) + ")"
	case l[FluxHelmReleaseLabel] != "":
		return ReasonManagedByFlux, "Flux (HelmRelease " + qualified(l[FluxHelmReleaseNSLabel], l[FluxHelmReleaseLabel]) + ")"
	}
	return "", ""
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// errGitOps: a GitOps tool owns the template; p.Note names the images to
// write in Git.
var errGitOps = errors.New("template left to GitOps")

// gitOps leaves the template of a GitOps-managed workload alone: its tool
// would put the old template back (self-heal) and the controller would then
// replace every upgraded pod. The pods stay upgraded in place; the outcome
// names what to write in Git. inplace.dev/sync-under-gitops: "true" syncs
// anyway.
func (s *Syncer) gitOps(r *rollout.Rollout, p *rollout.Sync, meta metav1.ObjectMeta) error {
	reason, who := Manager(meta)
	if reason == "" {
		return nil
	}
	anyway, err := policy.SyncUnderGitOps(meta.Annotations)
	if err != nil {
		return notSynced(p, "InvalidAnnotation", "template left as is: %v", err)
	}
	if anyway {
		return nil
	}
	p.Result, p.Reason = events.TemplateLeftToGitOps, reason
	p.Note = fmt.Sprintf("%s %s is managed by %s: its template is left to Git; write %s there "+
		"(the pods already run it in place; %s: \"true\" syncs the template anyway)",
		r.Workload.Kind, r.Workload.Name, who, describe(p.Images), policy.AnnotationSyncUnderGitOps)
	return errGitOps
}

// changes says what the sync changed, container by container, in the
// words of the kubelet's Events: `container app: image "registry/shop:1.0"
// → "registry/shop:1.1@sha256:…"`.
func changes(prev, now map[string]string) string {
	parts := make([]string, 0, len(now))
	for name, img := range now {
		if prev[name] == "" || prev[name] == img {
			parts = append(parts, fmt.Sprintf("container %s: image %q", name, img))
			continue
		}
		parts = append(parts, fmt.Sprintf("container %s: image %q → %q", name, prev[name], img))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// syncedMessage is the InPlaceTemplateSynced Event: a sentence, no Go
// syntax. It names the command that goes back in place, for those who
// would reach for kubectl rollout undo.
func syncedMessage(r *rollout.Rollout, p *rollout.Sync) string {
	return fmt.Sprintf("Synced the %s template to the images its pods run, without a rollout: %s (%s); "+
		"to go back in place, not by a rollout: %s", r.Workload.Kind, changes(p.PreviousImages, p.Images), upgrade(r), undoCommand(r.Workload))
}

// upgrade names the rollout: "upgrade u-2", or "upgrade u-2, the undo of u-1".
func upgrade(r *rollout.Rollout) string {
	if r.Push.Undo != "" {
		return fmt.Sprintf("upgrade %s, the undo of %s", r.UpgradeID, r.Push.Undo)
	}
	return "upgrade " + r.UpgradeID
}

// undoCommand is `inplace undo deployment/web -n shop`.
func undoCommand(w events.ObjectRef) string {
	return fmt.Sprintf("inplace undo %s/%s -n %s", strings.ToLower(w.Kind), w.Name, w.Namespace)
}

// describe lists images by container: "app=registry/shop:1.1@sha256:…".
func describe(images map[string]string) string {
	parts := make([]string, 0, len(images))
	for name, img := range images {
		parts = append(parts, name+"="+img)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
