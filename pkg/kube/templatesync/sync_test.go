package templatesync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/polymorphichelpers"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/templatesync"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// fixture is one workload moved in place, ready for its template sync.
type fixture struct {
	t        *testing.T
	w        *world.World
	c        kubernetes.Interface
	ns, name string
	kind     string
	old, new string
	// pinned is new@digest, what compute-spec plans when the push has a digest.
	pinned string
	uids   map[string]types.UID
	// cpu, when set, is what the template's app container asks (resizable
	// without a restart).
	cpu string
}

func newFixture(t *testing.T, kind string) *fixture {
	w := world.Shared(t)
	f := &fixture{t: t, w: w, c: w.Client(), ns: w.NewNamespace(t), name: "shop", kind: kind}
	ctx := t.Context()
	digests := map[string]string{}
	for _, tag := range []string{"1.0.0", "1.1.0"} {
		d, err := w.Registry.Push(ctx, f.ns+"/shop", tag)
		if err != nil {
			t.Fatal(err)
		}
		digests[tag] = d
	}
	f.old = w.Registry.Host() + "/" + f.ns + "/shop:1.0.0"
	f.new = w.Registry.Host() + "/" + f.ns + "/shop:1.1.0"
	f.pinned = f.new + "@" + digests["1.1.0"]
	return f
}

func (f *fixture) template() corev1.PodTemplateSpec {
	c := corev1.Container{Name: "app", Image: f.old}
	if f.cpu != "" {
		c.Resources = cpuAsk(f.cpu)
		c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}}
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": f.name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

// create makes the workload with n pods (DaemonSet: one per node) and waits for them.
func (f *fixture) create(n int32) {
	f.t.Helper()
	ctx := f.t.Context()
	meta := metav1.ObjectMeta{Name: f.name, Namespace: f.ns}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": f.name}}
	var err error
	switch f.kind {
	case "Deployment":
		_, err = f.c.AppsV1().Deployments(f.ns).Create(ctx, &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: sel, Template: f.template()}}, metav1.CreateOptions{})
	case "StatefulSet":
		_, err = f.c.AppsV1().StatefulSets(f.ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Replicas: &n, Selector: sel, Template: f.template(),
				PodManagementPolicy: appsv1.ParallelPodManagement}}, metav1.CreateOptions{})
	case "DaemonSet":
		n = int32(len(f.w.NodeNames()))
		_, err = f.c.AppsV1().DaemonSets(f.ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{Selector: sel, Template: f.template()}}, metav1.CreateOptions{})
	}
	if err != nil {
		f.t.Fatal(err)
	}
	pods, err := world.WaitPods(ctx, f.c, f.ns, "app="+f.name, 2*time.Minute, "all Ready", world.AllReady(int(n)))
	if err != nil {
		f.t.Fatal(err)
	}
	f.uids = map[string]types.UID{}
	for _, p := range pods {
		f.uids[p.Name] = p.UID
	}
	f.settled()
}

// settled waits for the controller to report the workload fully rolled out.
func (f *fixture) settled() {
	f.t.Helper()
	err := world.Eventually(f.t.Context(), time.Minute, f.kind+" rollout status complete", func(ctx context.Context) (bool, error) {
		msg, done, err := f.rolloutStatus(ctx)
		f.t.Log(msg)
		return done, err
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// rolloutStatus is `kubectl rollout status`, with kubectl's own status viewer.
func (f *fixture) rolloutStatus(ctx context.Context) (string, bool, error) {
	var obj runtime.Object
	var err error
	switch f.kind {
	case "Deployment":
		obj, err = f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	case "StatefulSet":
		obj, err = f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	case "DaemonSet":
		obj, err = f.c.AppsV1().DaemonSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	}
	if err != nil {
		return "", false, err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return "", false, err
	}
	viewer, err := polymorphichelpers.StatusViewerFor(schema.GroupKind{Group: "apps", Kind: f.kind})
	if err != nil {
		return "", false, err
	}
	return viewer.Status(&unstructured.Unstructured{Object: u}, 0)
}

// inPlace does what patch-pod and verify do: each pod's image is patched
// and the test waits until the kubelet runs it and the pod is Ready.
func (f *fixture) inPlace() *rollout.Rollout {
	f.t.Helper()
	return f.inPlaceTo(f.new)
}

// inPlaceTo is inPlace to image target.
func (f *fixture) inPlaceTo(target string) *rollout.Rollout {
	f.t.Helper()
	ctx := f.t.Context()
	r := &rollout.Rollout{UpgradeID: "u-sync", Phase: rollout.Syncing, Pods: map[string]*rollout.Pod{},
		Workload: events.ObjectRef{Kind: f.kind, Namespace: f.ns, Name: f.name},
		Push: events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: f.w.Registry.Host(), Repository: f.ns + "/shop",
			Tag: "1.1.0", Origin: "test"}}}
	for name, uid := range f.uids {
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/uid","value":%q},{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, uid, target)
		if _, err := f.c.CoreV1().Pods(f.ns).Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			f.t.Fatal(err)
		}
		r.Pods[name] = &rollout.Pod{Name: name, UID: string(uid), State: rollout.Succeeded,
			Containers: []events.ContainerPlan{{Name: "app", FromImage: f.old, ToImage: target}}}
	}
	_, err := world.WaitPods(ctx, f.c, f.ns, "app="+f.name, 2*time.Minute, "all Ready on the new image", func(pods []corev1.Pod) bool {
		for _, p := range pods {
			cs := world.ContainerStatus(&p, "app")
			if !world.PodReady(&p) || cs == nil || cs.Image != target || cs.RestartCount != 1 {
				return false
			}
		}
		return len(pods) == len(f.uids)
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// sync runs the template sync to the end. Every step runs twice: first as
// a process that dies right after its API write (its progress is lost),
// then again from the last recorded progress by a new Syncer.
func (f *fixture) sync(r *rollout.Rollout) []string {
	f.t.Helper()
	ctx := f.t.Context()
	var steps []string
	deadline := time.Now().Add(2 * time.Minute)
	for crashed := false; ; {
		s := &templatesync.Syncer{Client: f.c}
		p, done, err := s.Sync(ctx, r)
		if k, _ := settle.Classify(err); k == settle.Later {
			if time.Now().After(deadline) {
				f.t.Fatalf("sync stuck at %q: %v", stepOf(r), err)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if err != nil {
			f.t.Fatalf("sync step %q: %v", stepOf(r), err)
		}
		if !crashed && !done {
			crashed = true // the write happened; the record of it did not
			continue
		}
		crashed = false
		r.Sync = &p
		steps = append(steps, p.Step)
		if done {
			return steps
		}
	}
}

func stepOf(r *rollout.Rollout) string {
	if r.Sync == nil {
		return "start"
	}
	return r.Sync.Step
}

// checkPodsKept: the same pods (names and UIDs), none deleted or recreated.
func (f *fixture) checkPodsKept() []corev1.Pod {
	f.t.Helper()
	list, err := f.c.CoreV1().Pods(f.ns).List(f.t.Context(), metav1.ListOptions{LabelSelector: "app=" + f.name})
	if err != nil {
		f.t.Fatal(err)
	}
	got := map[string]types.UID{}
	for _, p := range list.Items {
		got[p.Name] = p.UID
		if p.DeletionTimestamp != nil {
			f.t.Errorf("pod %s is being deleted", p.Name)
		}
	}
	if len(got) != len(f.uids) {
		f.t.Errorf("pods %v; want exactly %v", got, f.uids)
	}
	for name, uid := range f.uids {
		if got[name] != uid {
			f.t.Errorf("pod %s has UID %s; was %s (recreated)", name, got[name], uid)
		}
	}
	return list.Items
}

func (f *fixture) checkRecord(meta metav1.ObjectMeta, spec corev1.PodSpec) {
	f.t.Helper()
	if img := spec.Containers[0].Image; img != f.new {
		f.t.Errorf("template image %s; want %s", img, f.new)
	}
	if _, ok := meta.Annotations[inplace.SyncAnnotation]; ok {
		f.t.Errorf("the sync record %s was left on the workload", inplace.SyncAnnotation)
	}
	prev, err := templatesync.ParsePrevious(meta.Annotations[templatesync.PreviousImagesAnnotation])
	if err != nil || len(prev) == 0 || prev[0].Images["app"] != f.old {
		f.t.Errorf("previous images annotation = %q (%v); want app=%s first", meta.Annotations[templatesync.PreviousImagesAnnotation], err, f.old)
	}
	if got := meta.Annotations[inplace.ChangeCauseAnnotation]; !strings.Contains(got, "u-sync") || !strings.Contains(got, f.new) {
		f.t.Errorf("change-cause %q; want the upgrade and the image", got)
	}
}

// checkStatusWatch: kubectl's rollout-status viewer never failed during the
// sync; for how long it counted fewer pods updated than before is logged
// (it must be never when never is true).
func (f *fixture) checkStatusWatch(sw *statusWatch, never bool) {
	f.t.Helper()
	failed, fewer, n := sw.finish()
	sw.log(f.t)
	f.t.Logf("MEASURE %s: %d versions seen, fewer pods updated than before for %s", f.kind, n, fewer)
	if len(failed) > 0 {
		f.t.Errorf("kubectl rollout status failed during the sync: %q", failed)
	}
	if never && fewer > 0 {
		f.t.Errorf("kubectl rollout status counted fewer pods updated than before for %s", fewer)
	}
}
