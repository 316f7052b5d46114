package e2e_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/test/world"
)

// A CPU resize of a StatefulSet (2 pods) and of a DaemonSet (a pod a node)
// under resizePolicy NotRequired: every pod is resized in place without a
// restart (same UID, IP, node, containerID and restartCount), then the
// template follows without a rollout: it asks the new CPU, the result says
// Synced, no pod is replaced, and the controllers count every pod as
// updated (StatefulSet: updatedReplicas == replicas and currentRevision ==
// updateRevision, the pods labelled with it; DaemonSet:
// updatedNumberScheduled == desired, strategy still RollingUpdate).
func TestResizeStatefulSetAndDaemonSetTemplateFollows(t *testing.T) {
	e := newEnv(t)
	skipResizeOnHollow(t, e)
	// One push, its digest pinned: a push of the same tag while the
	// workloads exist would upgrade their pods (policy digest).
	image := e.ref("shop", "1.0.0") + "@" + e.push("shop", "1.0.0")
	e.createSized("StatefulSet", "sized-db", 2, "100m", image)
	e.createSized("DaemonSet", "sized-agent", 0, "100m", image)
	ctx := t.Context()
	c := e.w.Client().AppsV1()
	stsBefore, err := c.StatefulSets(e.ns).Get(ctx, "sized-db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wanted := map[string]int{"sized-db": 2, "sized-agent": len(e.w.NodeNames())}
	before := map[string]map[string]podState{}
	for app := range wanted {
		before[app] = map[string]podState{}
		for _, p := range e.podList(app) {
			before[app][p.Name] = stateOf(p)
		}
	}

	e.requestResize("StatefulSet", "sized-db", "200m", "app")
	e.requestResize("DaemonSet", "sized-agent", "200m", "app")
	want := cpu("200m")
	for app, n := range wanted {
		ev, res := e.waitResizeResult(app, 3*time.Minute)
		if ev.Type() != events.ContainerResizeSucceeded || res.Counts.Succeeded != n {
			t.Fatalf("%s: result %s %+v; want succeeded, %d pods", app, ev.Type(), res, n)
		}
		if res.Template != events.TemplateSynced {
			t.Errorf("%s: result template %q; want %s", app, res.Template, events.TemplateSynced)
		}
		e.checkResizedInPlace(app, before[app], want)
	}

	sts, err := c.StatefulSets(e.ns).Get(ctx, "sized-db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.DaemonSets(e.ns).Get(ctx, "sized-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for kind, tmpl := range map[string]corev1.PodTemplateSpec{"StatefulSet": sts.Spec.Template, "DaemonSet": ds.Spec.Template} {
		if got := tmpl.Spec.Containers[0].Resources; !resize.Equal(&got, &want) {
			t.Errorf("%s template asks %s; want %s", kind, resize.String(got), resize.String(want))
		}
	}
	if sts.Status.UpdateRevision == stsBefore.Status.UpdateRevision {
		t.Errorf("StatefulSet update revision still %s: the template did not change", sts.Status.UpdateRevision)
	}
	if sts.Spec.UpdateStrategy.RollingUpdate != nil && sts.Spec.UpdateStrategy.RollingUpdate.Partition != nil &&
		*sts.Spec.UpdateStrategy.RollingUpdate.Partition != 0 {
		t.Errorf("StatefulSet left with partition %d", *sts.Spec.UpdateStrategy.RollingUpdate.Partition)
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		t.Errorf("DaemonSet strategy %s; want RollingUpdate", ds.Spec.UpdateStrategy.Type)
	}

	err = world.Eventually(ctx, time.Minute, "StatefulSet counts 2 updated pods at one revision", func(ctx context.Context) (bool, error) {
		s, err := c.StatefulSets(e.ns).Get(ctx, "sized-db", metav1.GetOptions{})
		return err == nil && s.Status.ObservedGeneration >= s.Generation && s.Status.UpdatedReplicas == 2 &&
			s.Status.CurrentRevision == s.Status.UpdateRevision && s.Status.UpdateRevision == sts.Status.UpdateRevision, err
	})
	if err != nil {
		t.Error(err)
	}
	err = world.Eventually(ctx, time.Minute, "DaemonSet counts every pod updated", func(ctx context.Context) (bool, error) {
		d, err := c.DaemonSets(e.ns).Get(ctx, "sized-agent", metav1.GetOptions{})
		st := d.Status
		return err == nil && st.ObservedGeneration >= d.Generation && st.DesiredNumberScheduled == int32(wanted["sized-agent"]) &&
			st.UpdatedNumberScheduled == st.DesiredNumberScheduled, err
	})
	if err != nil {
		t.Error(err)
	}
	for app := range wanted {
		for _, p := range e.podList(app) {
			if b, ok := before[app][p.Name]; !ok || b.UID != string(p.UID) {
				t.Errorf("pod %s was replaced after the template sync", p.Name)
			}
			if app == "sized-db" && p.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision {
				t.Errorf("pod %s revision %s; want %s", p.Name, p.Labels[appsv1.ControllerRevisionHashLabelKey], sts.Status.UpdateRevision)
			}
		}
	}
}

// checkResizedInPlace: app's pods are the ones before (same UID, IP and
// node), its app container did not restart (same containerID and
// restartCount), the spec asks want, the kubelet reports it, and each pod
// has one InPlaceResized Event.
func (e *env) checkResizedInPlace(app string, before map[string]podState, want corev1.ResourceRequirements) {
	e.t.Helper()
	pods := e.podList(app)
	if len(pods) != len(before) {
		e.t.Errorf("%s: %d pods; had %d", app, len(pods), len(before))
	}
	for _, p := range pods {
		b, ok := before[p.Name]
		if !ok {
			e.t.Fatalf("pod %s is new: a resize replaced a pod", p.Name)
		}
		after := stateOf(p)
		if after.UID != b.UID || after.IP != b.IP || after.Node != b.Node {
			e.t.Errorf("pod %s changed: %+v → %+v", p.Name, b, after)
		}
		if a, o := after.Containers["app"], b.Containers["app"]; a.ID != o.ID || a.Restarts != o.Restarts {
			e.t.Errorf("pod %s: app restarted (containerID %s → %s, restartCount %d → %d); resizePolicy NotRequired", p.Name, o.ID, a.ID, o.Restarts, a.Restarts)
		}
		if got := p.Spec.Containers[0].Resources; !resize.Equal(&got, &want) {
			e.t.Errorf("pod %s: spec asks %s; want %s", p.Name, resize.String(got), resize.String(want))
		}
		if cs := world.ContainerStatus(p, "app"); cs == nil || cs.Resources == nil || !resize.Equal(cs.Resources, &want) {
			e.t.Errorf("pod %s: the kubelet reports %v; want %s", p.Name, cs, resize.String(want))
		}
		if evs := e.eventsOnceThere(p.Name, "InPlaceResized")["InPlaceResized"]; len(evs) != 1 {
			e.t.Errorf("pod %s: InPlaceResized Events %q; want one", p.Name, evs)
		}
	}
}

// createSized creates an opted-in workload of kind (max-unavailable 1; a
// DaemonSet has a pod on every node, replicas unused) of one container app
// asking cpu, resizable without a restart, and waits until its pods are
// Ready.
func (e *env) createSized(kind, name string, replicas int32, cpuRequest, image string) {
	e.t.Helper()
	e.createWith(kind, name, replicas, cpu(cpuRequest), image)
}

// createWith is createSized with the container's resources.
func (e *env) createWith(kind, name string, replicas int32, res corev1.ResourceRequirements, image string) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	meta := metav1.ObjectMeta{Name: name, Namespace: e.ns,
		Annotations: map[string]string{"inplace.dev/policy": "digest", "inplace.dev/max-unavailable": "1"}}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: image, Resources: res,
		ResizePolicy: []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}}}}}}
	apps, ctx, n := e.w.Client().AppsV1(), e.t.Context(), int(replicas)
	var err error
	switch kind {
	case "Deployment":
		_, err = apps.Deployments(e.ns).Create(ctx, &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	case "StatefulSet":
		_, err = apps.StatefulSets(e.ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas, Selector: sel, Template: tmpl, PodManagementPolicy: appsv1.ParallelPodManagement}}, metav1.CreateOptions{})
	case "DaemonSet":
		n = len(e.w.NodeNames())
		_, err = apps.DaemonSets(e.ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(ctx, e.w.Client(), e.ns, "app="+name, 2*time.Minute, "all Ready", world.AllReady(n)); err != nil {
		e.t.Fatal(err)
	}
}
