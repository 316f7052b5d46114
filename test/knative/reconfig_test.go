package knative_test

import (
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/kube/reconfig"
	"github.com/inplace-dev/inplace/test/world"
)

// TestConfigChangeInKnativeMode: in Knative mode no bus is there for the
// ConfigMap watch to publish on; compute-spec's Service sends its restart
// request to the Broker (K_SINK), and the Triggers take it from there
// through patch-pod and verify: the opted-in Deployment's pods restart in
// place, the same pods on the same image, one restart each.
func TestConfigChangeInKnativeMode(t *testing.T) {
	p := project(t)
	w := p.Node.World
	ctx := t.Context()
	ns := w.NewNamespace(t)
	if err := p.WaitWatching(ctx, ns, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Registry.Push(ctx, ns+"/app", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	cms := w.Client().CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"level": "info"}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "conf"}
	_, err = w.Client().AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "conf", Annotations: map[string]string{"inplace.dev/policy": "digest",
			reconfig.Annotation: reconfig.Referenced, "inplace.dev/max-unavailable": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Volumes: []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}}},
				Containers: []corev1.Container{{Name: "app", Image: w.Registry.Host() + "/" + ns + "/app:1.0.0",
					VolumeMounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/app"}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := world.WaitPods(ctx, w.Client(), ns, "app=conf", 2*time.Minute, "all Ready", world.AllReady(2)); err != nil {
		t.Fatal(err)
	}
	before := pods(t, w, ns, "conf")

	cm.Data["level"] = "debug"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e, err := p.Recorder.Wait(ctx, 3*time.Minute, "container.restart result for "+ns+"/conf", func(e cloudevents.Event) bool {
		if e.Type() != events.ContainerRestartSucceeded && e.Type() != events.ContainerRestartFailed {
			return false
		}
		d, err := events.As[events.RestartResultData](e)
		return err == nil && d.Target.Namespace == ns
	})
	if err != nil {
		t.Fatalf("%v\nevents through the Broker: %v\n%s", err, typesSeen(p, ns), p.Node.Logs(15))
	}
	d, _ := events.As[events.RestartResultData](e)
	if e.Type() != events.ContainerRestartSucceeded || d.Counts.Succeeded != 2 {
		t.Fatalf("%s %+v; want 2 pods restarted", e.Type(), d)
	}
	after := pods(t, w, ns, "conf")
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok || a.UID != b.UID || a.Node != b.Node || a.IP != b.IP:
			t.Errorf("pod %s was replaced: %+v → %+v", name, b, a)
		case a.Restarts != b.Restarts+1 || a.ImageID != b.ImageID:
			t.Errorf("pod %s: restarts %d → %d, imageID %s → %s; want +1 on the same image", name, b.Restarts, a.Restarts, b.ImageID, a.ImageID)
		}
	}
}
