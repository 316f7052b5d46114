package e2e_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/describe"
	"k8s.io/kubectl/pkg/polymorphichelpers"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/world"
)

// kinded is a workload of any kind for the kubectl test.
type kinded struct {
	kind, name string
	replicas   int32
}

// create makes a workload of k.kind on image, opted in, and waits for its pods.
func (e *env) create(k kinded, image string) {
	e.t.Helper()
	ctx := e.t.Context()
	labels := map[string]string{"app": k.name}
	meta := metav1.ObjectMeta{Name: k.name, Namespace: e.ns, Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	var err error
	n := int(k.replicas)
	switch k.kind {
	case "Deployment":
		_, err = e.w.Client().AppsV1().Deployments(e.ns).Create(ctx, &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &k.replicas, Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	case "StatefulSet":
		_, err = e.w.Client().AppsV1().StatefulSets(e.ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Replicas: &k.replicas, Selector: sel, Template: tmpl,
				PodManagementPolicy: appsv1.ParallelPodManagement}}, metav1.CreateOptions{})
	case "DaemonSet":
		n = len(e.w.NodeNames())
		_, err = e.w.Client().AppsV1().DaemonSets(e.ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(ctx, e.w.Client(), e.ns, "app="+k.name, 2*time.Minute, "all Ready", world.AllReady(n)); err != nil {
		e.t.Fatal(err)
	}
}

// kubectl is what kubectl shows of a workload, with kubectl's own code:
// rollout history, rollout status, rollout undo --dry-run=client and the
// Events of describe.
func (e *env) kubectl(kind, name string) map[string]string {
	e.t.Helper()
	ctx := e.t.Context()
	gk := schema.GroupKind{Group: "apps", Kind: kind}
	c := e.w.Client()
	ref := strings.ToLower(kind) + "/" + name
	out := map[string]string{}
	hv, err := polymorphichelpers.HistoryViewerFor(gk, c)
	if err != nil {
		e.t.Fatal(err)
	}
	if out["rollout history "+ref], err = hv.ViewHistory(e.ns, name, 0); err != nil {
		out["rollout history "+ref] = "error: " + err.Error()
	}
	var obj runtime.Object
	switch kind {
	case "Deployment":
		obj, err = c.AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
	case "StatefulSet":
		obj, err = c.AppsV1().StatefulSets(e.ns).Get(ctx, name, metav1.GetOptions{})
	case "DaemonSet":
		obj, err = c.AppsV1().DaemonSets(e.ns).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		e.t.Fatal(err)
	}
	sv, err := polymorphichelpers.StatusViewerFor(gk)
	if err != nil {
		e.t.Fatal(err)
	}
	msg, _, err := sv.Status(&unstructured.Unstructured{Object: u}, 0)
	if err != nil {
		msg = "error: " + err.Error()
	}
	out["rollout status "+ref] = msg
	rb, err := polymorphichelpers.RollbackerFor(gk, c)
	if err != nil {
		e.t.Fatal(err)
	}
	undo, err := rb.Rollback(obj, nil, 0, util.DryRunClient)
	if err != nil {
		undo = "error: " + err.Error()
	}
	out["rollout undo "+ref+" --dry-run=client"] = undo
	d, ok := describe.DescriberFor(gk, e.w.RestConfig())
	if !ok {
		e.t.Fatalf("no describer for %s", kind)
	}
	text, err := d.Describe(e.ns, name, describe.DescriberSettings{ShowEvents: true})
	if err != nil {
		e.t.Fatal(err)
	}
	_, evs, _ := strings.Cut(text, "\nEvents:")
	out["describe "+ref] = "Events:" + evs
	return out
}

// TestKubectlSeesWhatTheDocsSay upgrades a Deployment, a StatefulSet and
// a DaemonSet in place through the whole chain and captures, with kubectl's
// own code, what kubectl shows of each afterwards: rollout history, rollout
// status, rollout undo --dry-run=client, and the Events of describe. Each
// output, with names, ids, digests and ages made generic, is in
// docs/workloads.md.
func TestKubectlSeesWhatTheDocsSay(t *testing.T) {
	e := newEnv(t)
	e.push("shop", "1.0.0")
	old := e.ref("shop", "1.0.0")
	kinds := []kinded{{"Deployment", "web", 3}, {"StatefulSet", "cart", 3}, {"DaemonSet", "agent", 0}}
	for _, k := range kinds {
		e.create(k, old)
	}
	digest := e.push("shop", "1.1.0")
	for _, k := range kinds {
		e.waitEvent(events.RolloutCompleted, "/"+k.name, 3*time.Minute)
	}
	e.settled(time.Minute)
	n := normalizer{host: e.w.Registry.Host(), ns: e.ns, digest: digest}
	doc, err := os.ReadFile("../../docs/workloads.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		for cmd, got := range e.kubectl(k.kind, k.name) {
			norm := n.normalize(got)
			t.Logf("$ kubectl %s\n%s", cmd, norm)
			if !inDoc(string(doc), "kubectl "+cmd, norm) {
				t.Errorf("docs/workloads.md lacks what `kubectl %s` shows:\n%s", cmd, norm)
			}
		}
	}
}

// normalizer makes kubectl's output generic: the test's registry and
// namespace, ids, digests, hashes and ages.
type normalizer struct{ host, ns, digest string }

var (
	reUpgradeID = regexp.MustCompile(`\bu-[0-9a-f]{12}\b`)
	reDigest    = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	// reGenerated: a ReplicaSet's pod-template-hash, a DaemonSet pod's suffix.
	reGenerated = regexp.MustCompile(`\b(web|agent)-[0-9a-z]{5,10}\b`)
)

func (n normalizer) normalize(s string) string {
	s = strings.ReplaceAll(s, n.host+"/"+n.ns+"/", "registry.example/")
	s = strings.ReplaceAll(s, n.ns, "shop")
	s = reUpgradeID.ReplaceAllString(s, "u-…")
	s = reDigest.ReplaceAllString(s, "sha256:…")
	return reGenerated.ReplaceAllString(s, "$1-…")
}

// inDoc reports whether the document shows, after "$ <cmd>", the lines of
// want: whitespace runs collapsed, Event ages left out, in any order (the
// controllers create pods in parallel).
func inDoc(doc, cmd, want string) bool {
	i := strings.Index(doc, "$ "+cmd+"\n")
	if i < 0 {
		return false
	}
	block := doc[i+len(cmd)+3:]
	if j := strings.Index(block, "\n$ "); j >= 0 {
		block = block[:j]
	}
	if j := strings.Index(block, "```"); j >= 0 {
		block = block[:j]
	}
	return slices.Equal(lines(block), lines(want))
}

// reAge is the Age column of an Event: 5s, 2m, <unknown>, 3s (x2 over 10s).
var reAge = regexp.MustCompile(`(^| )(\d+[smhd]|<unknown>)( \(x\d+ over \d+[smhd]\))?( |$)`)

// lines are the non-empty lines of s, whitespace collapsed, ages out, sorted.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		l = reAge.ReplaceAllString(l, "$1")
		if l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
