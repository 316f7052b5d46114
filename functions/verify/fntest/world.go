package fntest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// Timeout bounds every wait on the world: generous, the machine is busy.
const Timeout = 90 * time.Second

// Image is a pushed image.
type Image struct {
	// Ref is "<host>/<repo>:<tag>"; Pinned is Ref + "@" + Digest.
	Ref, Pinned string
	Repo, Tag   string
	Digest      string
	// ImageID is what a node reports for it: "<host>/<repo>@<digest>".
	ImageID string
}

// Push pushes a fresh image to repo:tag.
func Push(t testing.TB, w *world.World, repo, tag string, opts ...registry.PushOption) Image {
	t.Helper()
	d, err := w.Registry.Push(t.Context(), repo, tag, opts...)
	if err != nil {
		t.Fatalf("push %s:%s: %v", repo, tag, err)
	}
	ref := w.Registry.Host() + "/" + repo + ":" + tag
	return Image{Ref: ref, Pinned: ref + "@" + d, Repo: repo, Tag: tag, Digest: d,
		ImageID: w.Registry.Host() + "/" + repo + "@" + d}
}

// Missing is an image reference the registry does not hold.
func Missing(w *world.World, repo, tag string) Image {
	ref := w.Registry.Host() + "/" + repo + ":" + tag
	return Image{Ref: ref, Pinned: ref, Repo: repo, Tag: tag}
}

// Pod is a bare pod with one container "app" running image, optionally
// declaring the inplace.dev/ready readiness gate. It opts in (policy
// force); delete the annotation for one that does not.
func Pod(ns, name, image string, gate bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name},
			Annotations: map[string]string{policy.AnnotationPolicy: "force"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image,
			ImagePullPolicy: corev1.PullIfNotPresent}}},
	}
	if gate {
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
	}
	return p
}

// RunPod creates pod and waits until it is Ready; a pod declaring the
// gate gets its condition True first, as the pod watcher would.
func RunPod(t testing.TB, w *world.World, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	if _, err := w.Client().CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	if inplace.HasGate(pod) {
		WaitPod(t, w, pod, "containers ready", func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready
		})
		SetGate(t, w, pod, corev1.ConditionTrue)
	}
	return WaitPod(t, w, pod, "Ready", world.PodReady)
}

// SetGate sets the pod's inplace.dev/ready condition.
func SetGate(t testing.TB, w *world.World, pod *corev1.Pod, status corev1.ConditionStatus) {
	t.Helper()
	patch := inplace.GatePatch("", status, "Test", "", time.Now())
	_, err := w.Client().CoreV1().Pods(pod.Namespace).Patch(t.Context(), pod.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("set gate of %s to %s: %v", pod.Name, status, err)
	}
}

// WaitPod waits until the pod satisfies cond and returns it.
func WaitPod(t testing.TB, w *world.World, pod *corev1.Pod, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	p, err := world.WaitPod(t.Context(), w.Client(), pod.Namespace, pod.Name, Timeout, what, cond)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Get reads the pod from the API server.
func Get(t testing.TB, w *world.World, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	p, err := w.Client().CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s: %v", pod.Name, err)
	}
	return p
}

// Plan is the plan compute-spec would make to move pod to target (force
// policy), as a bare pod's upgrade, recorded in Records as compute-spec
// would record it.
func Plan(t testing.TB, pod *corev1.Pod, upgradeID string, target Image) events.Plan {
	t.Helper()
	host, _, _ := strings.Cut(target.Ref, "/")
	push := events.ImagePushedData{Registry: host, Repository: target.Repo, Tag: target.Tag,
		Digest: target.Digest, Origin: "manual"}
	pol, err := policy.Parse("force")
	if err != nil {
		t.Fatal(err)
	}
	cps, skips := inplace.PlanPod(pod, events.UpgradeRequestData{ImagePushedData: push}, pol)
	if len(cps) == 0 {
		t.Fatalf("no container of %s to move to %s: %+v", pod.Name, target.Ref, skips)
	}
	plan := events.Plan{
		UpgradeID:     upgradeID,
		Pod:           events.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Node: pod.Spec.NodeName},
		Owner:         events.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)},
		Containers:    cps,
		Target:        push.Ref(),
		Prepull:       true,
		ReadinessGate: inplace.HasGate(pod),
		VerifySeconds: 60,
		PlannedAt:     time.Now().UTC(),
	}
	Record(t, plan, push)
	return plan
}

// ContainerStatus is the status of container "app".
func ContainerStatus(p *corev1.Pod) *corev1.ContainerStatus { return world.ContainerStatus(p, "app") }

// SetImage changes a container's image as someone else would.
func SetImage(t testing.TB, w *world.World, pod *corev1.Pod, container, image string) {
	t.Helper()
	patch := `{"spec":{"containers":[{"name":"` + container + `","image":"` + image + `"}]}}`
	_, err := w.Client().CoreV1().Pods(pod.Namespace).Patch(t.Context(), pod.Name, types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("set image of %s/%s to %s: %v", pod.Name, container, image, err)
	}
}

// Create creates pod and returns it as created (no wait).
func Create(t testing.TB, w *world.World, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	p, err := w.Client().CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	return p
}
