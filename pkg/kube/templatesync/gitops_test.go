package templatesync_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/kube/templatesync"
)

// A Deployment that Argo CD or Flux manages keeps its template (their
// self-heal would put the old one back and the controller would replace
// every upgraded pod): the outcome says so and names the image to write in
// Git. The opt-in annotation syncs it anyway.
func TestGitOpsManagedTemplateIsLeftToGit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		ann    map[string]string
		reason string
		who    string
	}{
		{"argo cd label", map[string]string{templatesync.ArgoInstanceLabel: "shop-web"}, nil, templatesync.ReasonManagedByArgoCD, "Argo CD (application shop-web)"},
		{"argo cd annotation", nil, map[string]string{templatesync.ArgoTrackingAnnotation: "shop-web:apps/Deployment:shop/shop"}, templatesync.ReasonManagedByArgoCD, "Argo CD (application shop-web)"},
		{"flux kustomization", map[string]string{templatesync.FluxKustomizationLabel: "apps", templatesync.FluxKustomizationNSLabel: "flux-system"}, nil, templatesync.ReasonManagedByFlux, "Flux (Kustomization flux-system/apps)"},
		{"flux helmrelease", map[string]string{templatesync.FluxHelmReleaseLabel: "web", templatesync.FluxHelmReleaseNSLabel: "shop"}, nil, templatesync.ReasonManagedByFlux, "Flux (HelmRelease shop/web)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, who := templatesync.Manager(metav1.ObjectMeta{Labels: tc.labels, Annotations: tc.ann})
			if got != tc.reason || who != tc.who {
				t.Errorf("Manager = %q %q; want %q %q", got, who, tc.reason, tc.who)
			}
		})
	}
	if r, _ := templatesync.Manager(metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/instance": "web"}}); r != "" {
		t.Errorf("a Helm instance label alone counted as GitOps: %s", r)
	}

	f := newFixture(t, "Deployment")
	f.create(2)
	ctx := t.Context()
	label := []byte(`{"metadata":{"labels":{"` + templatesync.ArgoInstanceLabel + `":"shop-web"}}}`)
	if _, err := f.c.AppsV1().Deployments(f.ns).Patch(ctx, f.name, types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r := f.inPlace()
	rec := record.NewFakeRecorder(10)
	p, done, err := (&templatesync.Syncer{Client: f.c, Recorder: rec}).Sync(ctx, r)
	if err != nil || !done {
		t.Fatalf("sync: done %v err %v", done, err)
	}
	if p.Result != events.TemplateLeftToGitOps || p.Reason != templatesync.ReasonManagedByArgoCD ||
		!strings.Contains(p.Note, "write app="+f.new) || p.Images["app"] != f.new {
		t.Errorf("result %q reason %q images %v note %q", p.Result, p.Reason, p.Images, p.Note)
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Warning "+templatesync.EventLeftToGitOps) || !strings.Contains(ev, "Argo CD (application shop-web)") {
		t.Errorf("event %q", ev)
	}
	d, err := f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != f.old || d.Spec.Paused {
		t.Errorf("the managed template was touched: %s, paused %v", img, d.Spec.Paused)
	}
	f.checkPodsKept()

	// Opted in: synced anyway.
	optIn := []byte(`{"metadata":{"annotations":{"` + policy.AnnotationSyncUnderGitOps + `":"true"}}}`)
	if _, err := f.c.AppsV1().Deployments(f.ns).Patch(ctx, f.name, types.MergePatchType, optIn, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	steps := f.sync(r)
	if r.Sync.Result != events.TemplateSynced {
		t.Fatalf("with %s: steps %v result %q note %q", policy.AnnotationSyncUnderGitOps, steps, r.Sync.Result, r.Sync.Note)
	}
	d, err = f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.checkRecord(d.ObjectMeta, d.Spec.Template.Spec)
	f.settled()
	f.checkPodsKept()
}
