package fidelity_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	testimages "github.com/inplace-dev/inplace/test/images"
	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/registry"
	w "github.com/inplace-dev/inplace/test/world"
)

// images are the references a scenario uses, by label.
type images map[string]string

// step acts on the pod (when do is set), then waits until the pod
// satisfies until.
type step struct {
	what  string
	do    func(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, img images) error
	until func(p *corev1.Pod, img images) bool
}

type scenario struct {
	name  string
	pod   func(img images) corev1.PodSpec
	gate  bool
	steps []step
}

// scenarios are the stories both nodes play. On a real node the images
// are programs that do what the story needs (see pushImages): exit is one
// that runs to completion after 3 s, where the other nodes end any
// container of a pod that does not restart, and any init container, by
// themselves; forReal uses it for those.
func scenarios(forReal bool) []scenario {
	exit := "v1"
	if forReal {
		exit = "exit"
	}
	running := func(img string) func(*corev1.Pod, images) bool {
		return func(p *corev1.Pod, m images) bool {
			cs := w.ContainerStatus(p, "app")
			return w.PodReady(p) && cs != nil && cs.Image == m[img] && cs.State.Running != nil
		}
	}
	waiting := func(reason string) func(*corev1.Pod, images) bool {
		return func(p *corev1.Pod, _ images) bool {
			cs := w.ContainerStatus(p, "app")
			return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == reason
		}
	}
	// restarted: running img, Ready, restarted n times, on v1's digest.
	restarted := func(img string, n int32) func(*corev1.Pod, images) bool {
		return func(p *corev1.Pod, m images) bool {
			cs := w.ContainerStatus(p, "app")
			return running(img)(p, m) && cs.RestartCount == n && strings.HasSuffix(cs.ImageID, "@"+m["v1sum"])
		}
	}
	app := func(img string) func(images) corev1.PodSpec {
		return func(m images) corev1.PodSpec {
			return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: m[img]}}}
		}
	}
	return []scenario{
		{name: "start", pod: app("v1"), steps: []step{{what: "Ready", until: running("v1")}}},
		{name: "image change", pod: app("v1"), steps: []step{
			{what: "Ready on v1", until: running("v1")},
			{what: "Ready on v2", do: setImage("v2"), until: running("v2")},
		}},
		{name: "missing image", pod: app("v1"), steps: []step{
			{what: "Ready on v1", until: running("v1")},
			{what: "ImagePullBackOff", do: setImage("missing"), until: waiting("ImagePullBackOff")},
			{what: "Ready on v1 again", do: setImage("v1"), until: running("v1")},
		}},
		{name: "crash", pod: app("v1"), steps: []step{
			{what: "Ready on v1", until: running("v1")},
			{what: "CrashLoopBackOff", do: setImage("crash"), until: waiting("CrashLoopBackOff")},
		}},
		{name: "readiness gate", pod: app("v1"), gate: true, steps: []step{
			{what: "containers ready, gate missing", until: func(p *corev1.Pod, _ images) bool {
				return condition(p, corev1.ContainersReady) == corev1.ConditionTrue
			}},
			{what: "Ready", do: setGate(corev1.ConditionTrue), until: running("v1")},
			{what: "not Ready", do: setGate(corev1.ConditionFalse), until: func(p *corev1.Pod, _ images) bool {
				return condition(p, corev1.PodReady) == corev1.ConditionFalse
			}},
		}},
		// patch-pod's way: the gate set False before the image changes, so
		// the pod leaves its Services first, and True once it runs again.
		{name: "gated image change", pod: app("v1"), gate: true, steps: []step{
			{what: "containers ready, gate missing", until: func(p *corev1.Pod, _ images) bool {
				return condition(p, corev1.ContainersReady) == corev1.ConditionTrue
			}},
			{what: "Ready", do: setGate(corev1.ConditionTrue), until: running("v1")},
			{what: "not Ready", do: setGate(corev1.ConditionFalse), until: func(p *corev1.Pod, _ images) bool {
				return condition(p, corev1.PodReady) == corev1.ConditionFalse
			}},
			{what: "running v2, gate still False", do: setImage("v2"), until: func(p *corev1.Pod, m images) bool {
				cs := w.ContainerStatus(p, "app")
				return cs != nil && cs.Image == m["v2"] && cs.Ready
			}},
			{what: "Ready on v2", do: setGate(corev1.ConditionTrue), until: running("v2")},
		}},
		// A restart without a node agent (inplace restart): the image
		// switched between two references to the same bytes; the kubelet
		// restarts the container, which runs the same imageID.
		{name: "reference switch", pod: app("v1pinned"), steps: []step{
			{what: "Ready on v1 (tag@digest)", until: running("v1pinned")},
			{what: "restarted on v1 (digest)", do: setImage("v1digest"), until: restarted("v1digest", 1)},
			{what: "restarted on v1 (tag@digest) again", do: setImage("v1pinned"), until: restarted("v1pinned", 2)},
		}},
		{name: "run to completion", pod: func(m images) corev1.PodSpec {
			return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "app", Image: m[exit]}}}
		}, steps: []step{{what: "Succeeded", until: func(p *corev1.Pod, _ images) bool { return p.Status.Phase == corev1.PodSucceeded }}}},
		{name: "init container", pod: func(m images) corev1.PodSpec {
			return corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init", Image: m[exit]}},
				Containers: []corev1.Container{{Name: "app", Image: m["v1"]}}}
		}, steps: []step{{what: "Ready", until: running("v1")}}},
	}
}

// TestSimulationAgreesWithKubelet runs each scenario on a simulated node
// and on a hollow node (the real kubelet's code) at once and compares the
// sequence of each pod's status shapes and its Events.
func TestSimulationAgreesWithKubelet(t *testing.T) {
	compare(t, world(t), hollowNode, scenarios(false))
}

// TestSimulationAgreesWithRealNode runs each scenario on a simulated node
// and on a real node (kubelet, containerd, runc) at once and compares the
// same (INPLACE_NODES=real).
func TestSimulationAgreesWithRealNode(t *testing.T) {
	p := world(t)
	if p.real == nil {
		t.Skip(p.noReal)
	}
	compare(t, p, realNode, scenarios(true))
}

// compare plays every scenario on the simulated node and on node at once
// and compares the stories.
func compare(t *testing.T, p *pools, node string, scs []scenario) {
	ns := p.cluster.NewNamespace(t)
	kind := strings.SplitN(node, "-", 2)[0]
	for i, sc := range scs {
		// Each scenario has images of its own: which pod pulls an image
		// first onto a node must not depend on the other scenarios.
		img := pushImages(t, p, fmt.Sprintf("fidelity/%s-s%d", kind, i))
		names := map[string]string{}
		for label, ref := range img {
			names[ref] = label
			if d, err := p.registry.Resolve(t.Context(), ref); err == nil {
				names[d.Digest] = "@" + label
			}
		}
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			report := t.Errorf
			if why, ok := known[node][sc.name]; ok {
				report = func(format string, args ...any) { t.Logf("known difference ("+why+"): "+format, args...) }
			}
			stories := map[string][2][]string{}
			done := make(chan [3]any, 2)
			for _, node := range []string{simNode, node} {
				go func() {
					name := fmt.Sprintf("s%d-%s", i, strings.SplitN(node, "-", 2)[0])
					shapes, evs, err := run(t, p.cluster.Client(), ns, name, node, sc, img, names)
					done <- [3]any{node, [2][]string{shapes, evs}, err}
				}()
			}
			for range 2 {
				r := <-done
				if r[2] != nil {
					report("%s: %v", r[0], r[2])
				}
				stories[r[0].(string)] = r[1].([2][]string)
			}
			sim, real := stories[simNode], stories[node]
			if node == realNode {
				sim[1], real[1] = realEvents(sim[1]), realEvents(real[1])
			}
			if d := cmp.Diff(real[0], sim[0]); d != "" {
				report("pod status sequence differs (-%s node +simulated):\n%s", kind, d)
			}
			if d := cmp.Diff(real[1], sim[1]); d != "" {
				report("Events differ (-%s node +simulated):\n%s", kind, d)
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("%s node:\n  %s\n  %s", kind, strings.Join(real[0], "\n  "), strings.Join(real[1], "\n  "))
			}
		})
	}
}

// run creates the scenario's pod on node and plays its steps.
func run(t *testing.T, c kubernetes.Interface, ns, name, node string, sc scenario, img images, names map[string]string) ([]string, []string, error) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sc.pod(img)}
	pod.Spec.NodeName = node
	pod.Spec.TerminationGracePeriodSeconds = new(int64)
	if sc.gate {
		pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
	}
	r := record(t, c, ns, name, names)
	if _, err := c.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		return nil, nil, err
	}
	for _, st := range sc.steps {
		if st.do != nil {
			cur, err := c.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			if err := st.do(t.Context(), c, cur, img); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", st.what, err)
			}
		}
		err := w.Eventually(t.Context(), 2*time.Minute, st.what, func(context.Context) (bool, error) {
			p := r.current()
			return p != nil && st.until(p, img), nil
		})
		if err != nil {
			shapes, _ := r.story()
			return nil, nil, fmt.Errorf("%w; seen:\n  %s", err, strings.Join(shapes, "\n  "))
		}
	}
	// The sleep is the point: the kubelet posts its Events asynchronously,
	// through its recorder's queue, after the status the last step waited
	// for; nothing marks its last Event, so the story waits a window for it.
	time.Sleep(2 * time.Second)
	shapes, evs := r.story()
	return shapes, evs, nil
}

// pushImages pushes a scenario's images under prefix: v1, v2, crash (an
// image marked to crash: on a runnable registry a program that exits 1
// after 3 s), exit (on a runnable registry a program that exits 0 after
// 3 s), and names a missing one.
func pushImages(t *testing.T, p *pools, prefix string) images {
	t.Helper()
	host := p.registry.Host()
	img := images{"missing": host + "/" + prefix + "/app:v404"}
	for _, x := range []struct {
		label, repo, tag string
		opts             []registry.PushOption
	}{
		{"v1", prefix + "/app", "v1", nil}, {"v2", prefix + "/app", "v2", nil},
		{"crash", prefix + "/crash", "v1", []registry.PushOption{registry.WithCrash(), registry.WithProgram(testimages.InitProgram),
			registry.WithEnv(settings.Init{Sleep: 3 * time.Second, ExitCode: 1}.Env()...)}},
		{"exit", prefix + "/exit", "v1", []registry.PushOption{registry.WithProgram(testimages.InitProgram),
			registry.WithEnv(settings.Init{Sleep: 3 * time.Second}.Env()...)}},
	} {
		d, err := p.registry.Push(t.Context(), x.repo, x.tag, x.opts...)
		if err != nil {
			t.Fatal(err)
		}
		img[x.label] = host + "/" + x.repo + ":" + x.tag
		if x.label == "v1" { // two more references to the same bytes
			img["v1pinned"], img["v1digest"], img["v1sum"] = img["v1"]+"@"+d, host+"/"+x.repo+"@"+d, d
		}
	}
	return img
}

func setImage(label string) func(context.Context, kubernetes.Interface, *corev1.Pod, images) error {
	return func(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, img images) error {
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, img[label])
		_, err := c.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
}

func setGate(status corev1.ConditionStatus) func(context.Context, kubernetes.Interface, *corev1.Pod, images) error {
	return func(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, _ images) error {
		patch := inplace.GatePatch(pod.UID, status, "Test", "set by the test", time.Now())
		_, err := c.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	}
}

func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
