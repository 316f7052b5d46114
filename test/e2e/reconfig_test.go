package e2e_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube/reconfig"
	"github.com/inplace-dev/inplace/test/world"
)

// A ConfigMap change restarts, in place, the pods of the workload that opts
// in with inplace.dev/restart-on-change, within its budget, and only those:
// another workload mounting the same ConfigMap without it is left alone.
func TestConfigChangeRestartsInPlace(t *testing.T) {
	e := newEnv(t)
	cms := e.w.Client().CoreV1().ConfigMaps(e.ns)
	cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-conf"},
		Data: map[string]string{"level": "info"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.push("shop", "1.0.0")
	e.deployConf("opted", 4, map[string]string{"inplace.dev/policy": "digest", reconfig.Annotation: reconfig.Referenced,
		"inplace.dev/max-unavailable": "1"})
	e.deployConf("other", 2, map[string]string{"inplace.dev/policy": "digest"})
	before, beforeOther := e.pods("opted"), e.pods("other")
	m := e.watchPods("opted")

	cm.Data["level"] = "debug"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, res := e.waitRestartResult("opted", 3*time.Minute)
	if ev.Type() != events.ContainerRestartSucceeded || res.Counts.Succeeded != 4 {
		t.Fatalf("result %s %+v; want 4 pods restarted", ev.Type(), res)
	}
	after := e.pods("opted")
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok || a.UID != b.UID || a.IP != b.IP || a.Node != b.Node:
			t.Errorf("pod %s was replaced: %+v → %+v", name, b, a)
		case a.RestartCount != b.RestartCount+1 || a.ImageID != b.ImageID:
			t.Errorf("pod %s: restartCount %d → %d, imageID %s → %s; want +1 on the same image", name,
				b.RestartCount, a.RestartCount, b.ImageID, a.ImageID)
		}
	}
	maxDown, _, _ := m.results()
	if maxDown > 1 || maxDown == 0 {
		t.Errorf("%d pods NotReady at once; want 1 (max-unavailable 1, gated)", maxDown)
	}
	for name, b := range beforeOther {
		if a := e.pods("other")[name]; a != b {
			t.Errorf("pod %s of the workload that did not opt in changed: %+v → %+v", name, b, a)
		}
	}
	for _, r := range e.stream(events.ContainerRestartRequested) {
		if d, err := events.As[events.RestartRequestData](r); err == nil && d.Target.Name != "opted" {
			t.Errorf("restart requested for %s", d.Target)
		}
	}
}

// deployConf creates a gated Deployment whose app mounts the ConfigMap
// web-conf, and waits until its pods are Ready.
func (e *env) deployConf(name string, replicas int32, annotations map[string]string) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{
		ReadinessGates: []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}},
		Volumes: []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "web-conf"}}}}},
		Containers: []corev1.Container{{Name: "app", Image: e.ref("shop", "1.0.0"),
			VolumeMounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/web"}}}},
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}
	if _, err := e.w.Client().AppsV1().Deployments(e.ns).Create(e.t.Context(), d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(e.t.Context(), e.w.Client(), e.ns, "app="+name, 2*time.Minute, "all Ready",
		world.AllReady(int(replicas))); err != nil {
		e.t.Fatal(err)
	}
}
