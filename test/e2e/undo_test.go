package e2e_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/test/world"
)

// `inplace undo` after a rollout, of each kind (Deployment, StatefulSet,
// DaemonSet, a bare pod): the pods go back in place to the digest they ran
// before it (same UIDs, one more restart each) through the whole chain,
// the template follows back without a rollout (a Deployment keeps its
// ReplicaSet and revision), and the Event that kubectl describe shows
// after a sync names the command.
func TestUndoCommand(t *testing.T) {
	e := newEnv(t)
	d10 := e.push("shop", "1.0.0")
	old := e.ref("shop", "1.0.0")
	kinds := []kinded{{"Deployment", "web", 3}, {"StatefulSet", "cart", 2}, {"DaemonSet", "agent", int32(len(e.w.NodeNames()))}}
	for _, k := range kinds {
		e.create(k, old)
	}
	e.barePod("solo", old)
	kinds = append(kinds, kinded{"Pod", "solo", 1})
	d11 := e.push("shop", "1.1.0")
	for _, k := range kinds {
		e.waitEvent(events.RolloutCompleted, "/"+k.name, 3*time.Minute)
		e.waitAllOn(k.name, int(k.replicas), d11, time.Minute)
	}
	e.settled(time.Minute)
	if msg := e.workloadEvent("web", "InPlaceTemplateSynced"); !strings.Contains(msg, "inplace undo deployment/web -n "+e.ns) {
		t.Errorf("the InPlaceTemplateSynced Event does not name inplace undo: %q", msg)
	}
	rsBefore, revBefore := e.replicaSets("web")

	for _, k := range kinds {
		before := e.pods(k.name)
		ref := strings.ToLower(k.kind) + "/" + k.name
		out, err := e.inplace(append([]string{"undo", ref, "-n", e.ns, "--timeout", "3m"}, e.conn()...)...)
		if err != nil {
			t.Fatalf("undo %s: %v\n%s", ref, err, out)
		}
		t.Logf("$ inplace undo %s\n%s", ref, out)
		for _, want := range []string{"undo u-", old + "@" + d10, "undoing u-", "upgrade.planned", "upgrade.succeeded", "rollout.completed"} {
			if !strings.Contains(out, want) {
				t.Errorf("undo %s: output lacks %q:\n%s", ref, want, out)
			}
		}
		e.waitAllOn(k.name, int(k.replicas), d10, time.Minute)
		for name, p := range e.pods(k.name) {
			b, ok := before[name]
			switch {
			case !ok || b.UID != p.UID:
				t.Errorf("%s: pod %s was replaced (uid %s → %s)", ref, name, b.UID, p.UID)
			case p.RestartCount != b.RestartCount+1:
				t.Errorf("%s: pod %s restarted %d → %d times; want one more", ref, name, b.RestartCount, p.RestartCount)
			case p.Image != old+"@"+d10:
				t.Errorf("%s: pod %s runs %s; want %s@%s", ref, name, p.Image, old, d10)
			}
		}
		if k.kind == "Pod" {
			continue // no template
		}
		if got := e.templateImage(k.kind, k.name); imageref.DigestOf(got) != d10 || !strings.HasPrefix(got, old) {
			t.Errorf("%s: template image %s; want %s@%s", ref, got, old, d10)
		}
	}
	if rsAfter, revAfter := e.replicaSets("web"); strings.Join(rsAfter, ",") != strings.Join(rsBefore, ",") || revAfter != revBefore {
		t.Errorf("the undo made a rollout: ReplicaSets %v → %v, revision %s → %s", rsBefore, rsAfter, revBefore, revAfter)
	}
	if msg := e.workloadEvent("web", "InPlaceTemplateSynced"); !strings.Contains(msg, "the undo of u-") {
		t.Errorf("the last InPlaceTemplateSynced Event does not say it synced an undo: %q", msg)
	}
}

// workloadEvent is the message of the newest Event of reason on the
// workload name.
func (e *env) workloadEvent(name, reason string) string {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Events(e.ns).List(e.t.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
	if err != nil {
		e.t.Fatal(err)
	}
	msg := ""
	var at time.Time
	for _, ev := range list.Items {
		if t := ev.LastTimestamp.Time; msg == "" || !t.Before(at) {
			msg, at = ev.Message, t
		}
	}
	return msg
}

// replicaSets are the names of the Deployment's ReplicaSets and its revision.
func (e *env) replicaSets(name string) ([]string, string) {
	e.t.Helper()
	ctx := e.t.Context()
	list, err := e.w.Client().AppsV1().ReplicaSets(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, rs := range list.Items {
		names = append(names, rs.Name)
	}
	d, err := e.w.Client().AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return names, d.Annotations["deployment.kubernetes.io/revision"]
}

// templateImage is the image of container app in the workload's template.
func (e *env) templateImage(kind, name string) string {
	e.t.Helper()
	ctx := e.t.Context()
	apps := e.w.Client().AppsV1()
	switch kind {
	case "Deployment":
		d, err := apps.Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		return d.Spec.Template.Spec.Containers[0].Image
	case "StatefulSet":
		s, err := apps.StatefulSets(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		return s.Spec.Template.Spec.Containers[0].Image
	}
	d, err := apps.DaemonSets(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// barePod makes a pod of its own (no owner) on image, opted in, and waits
// until it is Ready.
func (e *env) barePod(name, image string) {
	e.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"app": name},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	if _, err := e.w.Client().CoreV1().Pods(e.ns).Create(e.t.Context(), pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(e.t.Context(), e.w.Client(), e.ns, "app="+name, 2*time.Minute, "Ready", world.AllReady(1)); err != nil {
		e.t.Fatal(err)
	}
}
