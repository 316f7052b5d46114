package kube_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/kube"
)

// runningPod is a pod of a Deployment as the API server and the kubelet
// leave it: the service-account volume and default tolerations admission
// adds, env, a port, a probe, a running ready status.
func runningPod(i int) *corev1.Pod {
	now := metav1.Now()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-5d8f7c9b4-%05d", i), Namespace: "shop", UID: "0b7a4f8e-1d2c-4e5f-9a6b-7c8d9e0f1a2b",
			ResourceVersion: "123456", CreationTimestamp: now,
			Labels:          map[string]string{"app": "web", "pod-template-hash": "5d8f7c9b4"},
			Annotations:     map[string]string{"inplace.dev/state": `{"phase":"Succeeded"}`},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f7c9b4", UID: "1b7a4f8e", Controller: new(true)}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: "Update"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "default",
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "inplace.dev/ready"}},
			Volumes: []corev1.Volume{{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(int64(3607))}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}}}}}}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: new(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: new(int64(300))}},
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example/shop/web:1.4.2", ImagePullPolicy: corev1.PullIfNotPresent,
				Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: "TCP"}},
				Env:            []corev1.EnvVar{{Name: "APP_MODE", Value: "production"}, {Name: "LOG_LEVEL", Value: "info"}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}},
				ResizePolicy:   []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
			}}},
	}
	for _, t := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	p.Status.Phase, p.Status.PodIP, p.Status.HostIP, p.Status.StartTime = corev1.PodRunning, "10.0.0.1", "172.18.0.2", &now
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.example/shop/web:1.4.2", Ready: true, Started: new(true),
		ImageID: "registry.example/shop/web@sha256:0123456789abcdef", ContainerID: "containerd://0123456789abcdef",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	return p
}

// TestSlimKeepsWhatIsRead: the cache's transform keeps every field a
// function reads from a cached pod and drops the rest.
func TestSlimKeepsWhatIsRead(t *testing.T) {
	full := runningPod(1)
	full.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}}
	obj, err := kube.Slim(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	slim := obj.(*corev1.Pod)
	c, fc := slim.Spec.Containers[0], full.Spec.Containers[0]
	kept := map[string]bool{
		"metadata (but managedFields)":     equality.Semantic.DeepEqual(slim.ObjectMeta, func() metav1.ObjectMeta { m := full.ObjectMeta; m.ManagedFields = nil; return m }()),
		"status":                           equality.Semantic.DeepEqual(slim.Status, full.Status),
		"node":                             slim.Spec.NodeName == full.Spec.NodeName,
		"readiness gates":                  equality.Semantic.DeepEqual(slim.Spec.ReadinessGates, full.Spec.ReadinessGates),
		"container name and image":         c.Name == fc.Name && c.Image == fc.Image && c.ImagePullPolicy == fc.ImagePullPolicy,
		"resources and resize policy":      equality.Semantic.DeepEqual(c.Resources, fc.Resources) && equality.Semantic.DeepEqual(c.ResizePolicy, fc.ResizePolicy),
		"preStop hook (that there is one)": c.Lifecycle != nil && c.Lifecycle.PreStop != nil,
	}
	for what, ok := range kept {
		if !ok {
			t.Errorf("slim pod lost its %s", what)
		}
	}
	if slim.Spec.Volumes != nil || slim.Spec.Tolerations != nil || c.Env != nil || c.VolumeMounts != nil || c.Ports != nil || c.ReadinessProbe != nil ||
		c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Exec != nil {
		t.Errorf("slim pod keeps what nothing reads: %+v", slim.Spec)
	}
}

// BenchmarkCachedPod prints the live heap of 10,000 cached pods decoded
// from JSON, as they are and as the cache keeps them.
func BenchmarkCachedPod(b *testing.B) {
	const n = 10000
	raw := make([][]byte, n)
	for i := range raw {
		raw[i], _ = json.Marshal(runningPod(i))
	}
	for _, bc := range []struct {
		name      string
		transform func(any) (any, error)
	}{{"managedFields-stripped", kube.StripManagedFields}, {"slim", kube.Slim}} {
		b.Run(bc.name, func(b *testing.B) {
			var perPod uint64
			for b.Loop() {
				perPod = liveBytesPerPod(b, raw, bc.transform)
			}
			b.ReportMetric(float64(perPod), "B/pod")
			b.ReportMetric(float64(perPod*n)/(1<<20), "MiB/10k-pods")
		})
	}
}

func liveBytesPerPod(b *testing.B, raw [][]byte, transform func(any) (any, error)) uint64 {
	pods := make([]any, len(raw))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, r := range raw {
		p := &corev1.Pod{}
		if err := json.Unmarshal(r, p); err != nil {
			b.Fatal(err)
		}
		var err error
		if pods[i], err = transform(p); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(pods)
	return (after.HeapAlloc - before.HeapAlloc) / uint64(len(raw))
}
