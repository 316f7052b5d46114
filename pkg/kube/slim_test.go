package kube_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
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

// fullPod is runningPod with what else the API server, admission and a
// kubelet of v1.35 fill in, and a sidecar (an init container that
// restarts always) with a preStop hook.
func fullPod(i int) *corev1.Pod {
	p := runningPod(i)
	always, grace := corev1.ContainerRestartPolicyAlways, int64(30)
	p.Spec.RestartPolicy, p.Spec.DNSPolicy, p.Spec.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, "default-scheduler"
	p.Spec.TerminationGracePeriodSeconds, p.Spec.SecurityContext = &grace, &corev1.PodSecurityContext{}
	p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	p.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "registry.example/mesh/proxy:2.0", RestartPolicy: &always,
		Lifecycle:                &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile, SecurityContext: &corev1.SecurityContext{}}}
	c := &p.Spec.Containers[0]
	c.TerminationMessagePath, c.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageReadFile
	st := &p.Status
	st.HostIPs, st.PodIPs, st.QOSClass = []corev1.HostIP{{IP: st.HostIP}}, []corev1.PodIP{{IP: st.PodIP}}, corev1.PodQOSBurstable
	cs := &st.ContainerStatuses[0]
	cs.RestartCount, cs.LastTerminationState = 1, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
	cs.Resources = &corev1.ResourceRequirements{Requests: c.Resources.Requests.DeepCopy()}
	cs.AllocatedResources = c.Resources.Requests.DeepCopy()
	cs.VolumeMounts = []corev1.VolumeMountStatus{{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
	cs.User = &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 0, GID: 0, SupplementalGroups: []int64{0}}}
	st.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", Image: "registry.example/mesh/proxy:2.0", Ready: true,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off"}}}}
	return p
}

// TestSlimKeepsWhatIsRead pins what the cache keeps of a pod: every field
// a function reads from a cached pod, nothing else. A function that reads
// a field more adds it here and to slimPod.
func TestSlimKeepsWhatIsRead(t *testing.T) {
	full := fullPod(1)
	obj, err := kube.NewTransform()(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{ObjectMeta: *full.ObjectMeta.DeepCopy()}
	want.ManagedFields = nil
	fc, fi := full.Spec.Containers[0], full.Spec.InitContainers[0]
	want.Spec = corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyAlways, ReadinessGates: full.Spec.ReadinessGates,
		ImagePullSecrets: full.Spec.ImagePullSecrets,
		InitContainers: []corev1.Container{{Name: fi.Name, Image: fi.Image, RestartPolicy: fi.RestartPolicy,
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{}}}},
		Containers: []corev1.Container{{Name: fc.Name, Image: fc.Image, ImagePullPolicy: fc.ImagePullPolicy, Resources: fc.Resources,
			ResizePolicy: fc.ResizePolicy}}}
	fs, cs := full.Status, full.Status.ContainerStatuses[0]
	want.Status = corev1.PodStatus{Phase: fs.Phase, Conditions: fs.Conditions, InitContainerStatuses: fs.InitContainerStatuses,
		ContainerStatuses: []corev1.ContainerStatus{{Name: cs.Name, State: cs.State, LastTerminationState: cs.LastTerminationState,
			Ready: cs.Ready, RestartCount: cs.RestartCount, Image: cs.Image, ImageID: cs.ImageID, ContainerID: cs.ContainerID,
			Started: cs.Started, Resources: cs.Resources}}}
	if diff := cmp.Diff(want, obj, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("slim pod (-want +got):\n%s", diff)
	}
}

// TestSlimShares: the pods of one cache share their repeated values
// (labels, owner, requests, image, condition types) instead of a copy
// each.
func TestSlimShares(t *testing.T) {
	transform := kube.NewTransform()
	var pods [2]*corev1.Pod
	for i := range pods {
		raw, err := json.Marshal(fullPod(i))
		if err != nil {
			t.Fatal(err)
		}
		p := &corev1.Pod{}
		if err := json.Unmarshal(raw, p); err != nil {
			t.Fatal(err)
		}
		obj, err := transform(p)
		if err != nil {
			t.Fatal(err)
		}
		pods[i] = obj.(*corev1.Pod)
	}
	a, b := pods[0], pods[1]
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for what, ok := range map[string]bool{
		"namespace":        same(a.Namespace, b.Namespace),
		"image":            same(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image),
		"node":             same(a.Spec.NodeName, b.Spec.NodeName),
		"condition type":   same(string(a.Status.Conditions[2].Type), string(b.Status.Conditions[2].Type)),
		"image ID":         same(a.Status.ContainerStatuses[0].ImageID, b.Status.ContainerStatuses[0].ImageID),
		"labels":           reflect.ValueOf(a.Labels).UnsafePointer() == reflect.ValueOf(b.Labels).UnsafePointer(),
		"annotations":      reflect.ValueOf(a.Annotations).UnsafePointer() == reflect.ValueOf(b.Annotations).UnsafePointer(),
		"requests":         reflect.ValueOf(a.Spec.Containers[0].Resources.Requests).UnsafePointer() == reflect.ValueOf(b.Spec.Containers[0].Resources.Requests).UnsafePointer(),
		"owner references": &a.OwnerReferences[0] == &b.OwnerReferences[0],
		"resize policy":    &a.Spec.Containers[0].ResizePolicy[0] == &b.Spec.Containers[0].ResizePolicy[0],
	} {
		if !ok {
			t.Errorf("%s: not shared as it should be", what)
		}
	}
}

// BenchmarkCachedPod prints the live heap of 10,000 cached pods decoded
// from protobuf (what client-go asks the API server for), as they are and
// as the cache keeps them.
func BenchmarkCachedPod(b *testing.B) {
	const n = 10000
	raw := make([][]byte, n)
	for i := range raw {
		raw[i], _ = runningPod(i).Marshal()
	}
	for _, bc := range []struct {
		name      string
		transform func(any) (any, error)
	}{{"managedFields-stripped", kube.StripManagedFields}, {"slim", kube.NewTransform()}} {
		b.Run(bc.name, func(b *testing.B) {
			var perPod, objects uint64
			for b.Loop() {
				perPod, objects = livePerPod(b, raw, bc.transform)
			}
			b.ReportMetric(float64(perPod), "B/pod")
			b.ReportMetric(float64(objects), "objects/pod")
			b.ReportMetric(float64(perPod*n)/(1<<20), "MiB/10k-pods")
		})
	}
}

// livePerPod is the live heap (bytes, objects) each pod adds.
func livePerPod(b *testing.B, raw [][]byte, transform func(any) (any, error)) (bytes, objects uint64) {
	pods := make([]any, len(raw))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, r := range raw {
		p := &corev1.Pod{}
		if err := p.Unmarshal(r); err != nil {
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
	n := uint64(len(raw))
	return (after.HeapAlloc - before.HeapAlloc) / n, (after.HeapObjects - before.HeapObjects) / n
}
