package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

// A Deployment that Argo CD manages: every pod is upgraded in place, the
// template is left to Git (Argo CD's self-heal would put it back and the
// controller would then replace every pod), and the outcome, an Event and
// `inplace status` say so and name the image to write in Git.
func TestGitOpsManagedDeploymentIsUpgradedInPlaceAndItsTemplateLeftToGit(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	old := e.ref("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 3, image: old, labels: map[string]string{"argocd.argoproj.io/instance": "shop"},
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}})
	before := e.pods("web")
	digest := e.push("shop", "1.1.0")
	e.waitAllOn("web", 3, digest, 3*time.Minute)
	for name, a := range e.pods("web") {
		if b := before[name]; a.UID != b.UID || a.RestartCount != b.RestartCount+1 {
			t.Errorf("pod %s not upgraded in place: %+v → %+v", name, b, a)
		}
	}
	done := e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
	d, err := events.As[events.RolloutData](done)
	if err != nil {
		t.Fatal(err)
	}
	want := e.ref("shop", "1.1.0") + "@" + digest
	if d.TemplateSynced || d.Reason != "TemplateLeftToGitOps" || d.Template == nil || d.Template.Images["app"] != want ||
		!strings.Contains(d.Message, "Argo CD (application shop)") || !strings.Contains(d.Message, "write app="+want) {
		t.Errorf("rollout.completed: synced %v reason %q template %+v message %q", d.TemplateSynced, d.Reason, d.Template, d.Message)
	}
	dep, err := e.w.Client().AppsV1().Deployments(e.ns).Get(t.Context(), "web", metav1GetOptions)
	if err != nil {
		t.Fatal(err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != old || dep.Spec.Paused {
		t.Errorf("template %s paused %v; want it left as is", img, dep.Spec.Paused)
	}
	if got := e.eventsOnceThere("web", "InPlaceTemplateLeftToGitOps")["InPlaceTemplateLeftToGitOps"]; len(got) != 1 {
		t.Errorf("Events on the Deployment: %v", e.kubeletEvents("web"))
	}
	rs, err := history.ReadRollouts(t.Context(), e.s.Bus.JetStream(), e.s.Bus.Config().KVBucket)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Workload.Namespace == e.ns {
			if s := history.Summarize(r); s.Template != events.TemplateLeftToGitOps || s.Reason != "TemplateLeftToGitOps" {
				t.Errorf("inplace status: template %q reason %q", s.Template, s.Reason)
			}
		}
	}
}
