package manifests_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

// applyAdmission creates config/admission for a test: its ConfigMap in ns,
// the policies and bindings under names of their own, the owners'
// parameter the ConfigMap in ns and the bindings' reach the namespace appNS
// alone, so other tests' pods are not judged by them. It waits until the
// API server enforces the owners' policy (its parameter loaded). The
// policies and bindings stay until the control plane stops: deleting the
// last binding of a parameter kind stops kube-apiserver's parameter
// informer for good, which would leave a later test's binding without
// its parameter.
func applyAdmission(t *testing.T, w *world.World, ids map[string]identity, ns, appNS string) {
	t.Helper()
	a := newApplier(t, w)
	for _, o := range render(t, filepath.Join(root(t), "config", "admission")) {
		o = moved(t, o, ns)
		switch o.GetKind() {
		case "ValidatingAdmissionPolicy":
			o.SetName(o.GetName() + "-" + ns)
		case "ValidatingAdmissionPolicyBinding":
			o.SetName(o.GetName() + "-" + ns)
			policy, _, _ := unstructured.NestedString(o.Object, "spec", "policyName")
			set(t, o, policy+"-"+ns, "spec", "policyName")
			if _, ok, _ := unstructured.NestedMap(o.Object, "spec", "paramRef"); ok {
				set(t, o, ns, "spec", "paramRef", "namespace")
			}
			set(t, o, map[string]any{"namespaceSelector": map[string]any{
				"matchLabels": map[string]any{"kubernetes.io/metadata.name": appNS}}}, "spec", "matchResources")
		}
		if err := a.apply(t.Context(), o); err != nil {
			t.Fatalf("create %s: %v", key(o), err)
		}
	}
	// A probe pod no owner of which opted in, never scheduled (nothing
	// pulls its image): the policy is on once patch-pod's write to it is
	// refused.
	p := fntest.Pod(appNS, "admission-probe", "registry.example/probe:1", false)
	p.Spec.NodeSelector = map[string]string{"inplace.dev/no-such-node": "true"}
	probe := fntest.Create(t, w, p)
	err := world.Eventually(t.Context(), fntest.Timeout, "the admission policy enforced", func(ctx context.Context) (bool, error) {
		err := annotate(ctx, ids["patch-pod"].client, probe, inplace.StateAnnotation, "probe", true)
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func set(t *testing.T, o *unstructured.Unstructured, v any, fields ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(o.Object, v, fields...); err != nil {
		t.Fatal(err)
	}
}

// annotate sets an annotation (a dry run when dry).
func annotate(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, k, v string, dry bool) error {
	return patch(ctx, c, pod, map[string]any{"metadata": map[string]any{"annotations": map[string]string{k: v}}}, dry, "")
}

func patch(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, body map[string]any, dry bool, sub string) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{}
	if dry {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	_, err = c.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, b, opts, subs...)
	return err
}

// TestAdmissionPolicyBoundsTheFunctions has each function's identity
// (config/rbac, whose roles do let it patch pods) write pods directly with
// a client, bypassing the functions' code: the API server's admission
// policy (config/admission) refuses every write beyond a function's bounds
// — a pod whose owner did not opt in, a label, another annotation, a plain
// init container's image, a toleration, an image by compute-spec, another
// status condition — and lets through what the chain does. The same writes
// by the cluster admin all go through: the policy binds the functions.
func TestAdmissionPolicyBoundsTheFunctions(t *testing.T) {
	w := world.Shared(t)
	ns, appNS := w.NewNamespace(t), w.NewNamespace(t)
	ids := applyRBAC(t, w, ns)
	v1, v2 := fntest.Push(t, w, appNS+"/app", "1.0.0"), fntest.Push(t, w, appNS+"/app", "2.0.0")
	init := fntest.Push(t, w, appNS+"/init", "1.0.0")
	withInit := func(name string) *corev1.Pod {
		p := fntest.Pod(appNS, name, v1.Ref, true)
		p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: init.Ref, ImagePullPolicy: corev1.PullIfNotPresent}}
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		return p
	}
	opted := fntest.RunPod(t, w, withInit("opted"))
	other := fntest.RunPod(t, w, withInit("other"))
	member := statefulSetPod(t, w, appNS, v1.Ref)
	applyAdmission(t, w, ids, ns, appNS)
	grantResize(t, w, ns, appNS, "inplace-compute-spec")
	keeper := &kube.OptedIn{Client: ids["compute-spec"].client, Namespace: ns}
	if err := keeper.Allow(t.Context(), kube.Owners([]*corev1.Pod{opted, member})); err != nil {
		t.Fatalf("compute-spec keeps the opted-in owners: %v", err)
	}
	// The API server reads the policy's parameter from its own informer: a
	// write right after the ConfigMap's may still find the owners absent.
	for _, pod := range []*corev1.Pod{opted, member} {
		err := world.Eventually(t.Context(), fntest.Timeout, "the policy sees "+pod.Name+"'s owner opted in", func(ctx context.Context) (bool, error) {
			err := annotate(ctx, ids["patch-pod"].client, pod, inplace.StateAnnotation, "{}", true)
			if err != nil && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
				return false, err
			}
			return err == nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	image := func(img string) map[string]any {
		return map[string]any{"spec": map[string]any{"containers": []map[string]any{{"name": "app", "image": img}}}}
	}
	gate := func(typ string) map[string]any {
		return map[string]any{"status": map[string]any{"conditions": []map[string]any{
			{"type": typ, "status": "False", "reason": "Test", "lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z")}}}}
	}
	cpu := func(q string) map[string]any {
		return map[string]any{"spec": map[string]any{"containers": []map[string]any{
			{"name": "app", "resources": map[string]any{"requests": map[string]string{"cpu": q}}}}}}
	}
	labelled := func(img string) map[string]any {
		b := image(img)
		b["metadata"] = map[string]any{"labels": map[string]string{inplace.RevisionLabel: "cart-6d8f9c7b5"}}
		return b
	}
	tests := []struct {
		identity, what string
		pod            *corev1.Pod
		body           map[string]any
		sub            string
		allowed        bool
	}{
		{"patch-pod", "an image of an opted-in pod", opted, image(v2.Ref), "", true},
		{"patch-pod", "the state annotation", opted, objMeta("annotations", inplace.StateAnnotation, "{}"), "", true},
		{"patch-pod", "an image of a pod whose owner did not opt in", other, image(v2.Ref), "", false},
		{"patch-pod", "an annotation of a pod whose owner did not opt in", other, objMeta("annotations", inplace.StateAnnotation, "{}"), "", false},
		{"patch-pod", "a label", opted, objMeta("labels", "app", "evil"), "", false},
		{"patch-pod", "another annotation", opted, objMeta("annotations", "example.com/x", "y"), "", false},
		{"patch-pod", "a plain init container's image", opted, map[string]any{"spec": map[string]any{
			"initContainers": []map[string]any{{"name": "setup", "image": v2.Ref}}}}, "", false},
		{"patch-pod", "a toleration", opted, map[string]any{"spec": map[string]any{
			"tolerations": []map[string]any{{"key": "evil", "operator": "Exists"}}}}, "", false},
		{"patch-pod", "the readiness gate", opted, gate(inplace.ReadinessGate), "status", true},
		{"patch-pod", "another condition", opted, gate("example.com/x"), "status", false},
		{"patch-pod", "a container's CPU through pods/resize", opted, cpu("200m"), "resize", true},
		{"patch-pod", "a container's CPU through pods/resize of a pod whose owner did not opt in", other, cpu("200m"), "resize", false},
		{"patch-pod", "the revision label of a StatefulSet's pod with its image", member, labelled(v2.Ref), "", true},
		{"patch-pod", "the revision label of a StatefulSet's pod alone", member, objMeta("labels", inplace.RevisionLabel, "cart-6d8f9c7b5"), "", false},
		{"patch-pod", "the revision label of a bare pod with its image", opted, labelled(v2.Ref), "", false},
		{"patch-pod", "another label of a StatefulSet's pod with its image", member, func() map[string]any {
			b := image(v2.Ref)
			b["metadata"] = map[string]any{"labels": map[string]string{"app": "evil"}}
			return b
		}(), "", false},
		{"verify", "the revision label of a StatefulSet's pod with its image", member, labelled(v2.Ref), "", false},
		{"verify", "an image of an opted-in pod", opted, image(v1.Ref), "", true},
		{"verify", "an image of a pod whose owner did not opt in", other, image(v2.Ref), "", false},
		{"verify", "a label", opted, objMeta("labels", "app", "evil"), "", false},
		{"verify", "the state annotation through pods/status (the gate and the final state in one write)", opted,
			objMeta("annotations", inplace.StateAnnotation, "{}"), "status", true},
		{"verify", "the state annotation through pods/status of a pod whose owner did not opt in", other,
			objMeta("annotations", inplace.StateAnnotation, "{}"), "status", false},
		{"verify", "another annotation through pods/status", opted, objMeta("annotations", "example.com/x", "y"), "status", false},
		{"verify", "a label through pods/status", opted, objMeta("labels", "app", "evil"), "status", false},
		{"verify", "the readiness gate of a pod whose owner did not opt in", other, gate(inplace.ReadinessGate), "status", true},
		{"verify", "a container's CPU back through pods/resize", opted, cpu("100m"), "resize", true},
		{"compute-spec", "the revision label", opted, objMeta("labels", "controller-revision-hash", "abc"), "", true},
		{"compute-spec", "the revision label of a pod whose owner did not opt in", other, objMeta("labels", "controller-revision-hash", "abc"), "", false},
		{"compute-spec", "the template generation label", opted, objMeta("labels", "pod-template-generation", "2"), "", true},
		{"compute-spec", "an image", opted, image(v2.Ref), "", false},
		{"compute-spec", "another label", opted, objMeta("labels", "app", "evil"), "", false},
		{"compute-spec", "a container's CPU through pods/resize (granted by a role of its own)", opted, cpu("300m"), "resize", false},
	}
	for _, tt := range tests {
		t.Run(tt.identity+"/"+tt.what, func(t *testing.T) {
			err := patch(t.Context(), ids[tt.identity].client, tt.pod, tt.body, true, tt.sub)
			switch {
			case tt.allowed && err != nil:
				t.Errorf("refused: %v", err)
			case !tt.allowed && err == nil:
				t.Error("allowed")
			case !tt.allowed && !strings.Contains(err.Error(), "inplace: "):
				t.Errorf("refused, but not by the policy: %v", err)
			}
			if tt.allowed {
				return
			}
			if err := patch(t.Context(), w.Client(), tt.pod, tt.body, true, tt.sub); err != nil {
				t.Errorf("the cluster admin's same write is refused too (so the test proves nothing): %v", err)
			}
		})
	}
}

// grantResize lets ServiceAccount sa of ns patch pods/resize in appNS (config/rbac
// does not): what the admission policy alone refuses.
func grantResize(t *testing.T, w *world.World, ns, appNS, sa string) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "resize-" + sa, Namespace: appNS},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/resize"}, Verbs: []string{"patch"}}}}
	if _, err := w.Client().RbacV1().Roles(appNS).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: appNS},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}}}
	if _, err := w.Client().RbacV1().RoleBindings(appNS).Create(t.Context(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":" + sa
	err := world.Eventually(t.Context(), fntest.Timeout, "the API server authorizes "+user+" to resize", func(ctx context.Context) (bool, error) {
		r, err := w.Client().AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: appNS, Verb: "patch", Resource: "pods", Subresource: "resize"}}}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func objMeta(field, k, v string) map[string]any {
	return map[string]any{"metadata": map[string]any{field: map[string]string{k: v}}}
}

// statefulSetPod is the pod of a one-replica StatefulSet in ns running
// image (container "app"), once the controller created it.
func statefulSetPod(t *testing.T, w *world.World, ns, image string) *corev1.Pod {
	t.Helper()
	one := int32(1)
	labels := map[string]string{"app": "cart"}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "cart", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image, ImagePullPolicy: corev1.PullIfNotPresent}}}}}}
	if _, err := w.Client().AppsV1().StatefulSets(ns).Create(t.Context(), sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	err := world.Eventually(t.Context(), fntest.Timeout, "StatefulSet cart's pod", func(ctx context.Context) (bool, error) {
		p, err := w.Client().CoreV1().Pods(ns).Get(ctx, "cart-0", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		pod = p
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}
