package manifests_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/test/world"
)

// TestOutsideTheRoleIsForbidden has each function's identity from
// config/rbac try what its function never needs; the API server refuses
// every one. The calls are ones the function's own code makes on other
// objects, or the next step of the chain (pre-pull may not patch what
// patch-pod patches), so a role too broad by one verb fails here.
func TestOutsideTheRoleIsForbidden(t *testing.T) {
	w := world.Shared(t)
	ns, appNS := w.NewNamespace(t), w.NewNamespace(t)
	ids := applyRBAC(t, w, ns)
	img := fntest.Push(t, w, appNS+"/tools", "1.0.0")
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "victim", img.Ref, false))
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: appNS}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: img.Ref}}}}}}
	if _, err := w.Client().AppsV1().Deployments(appNS).Create(t.Context(), dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	imagePatch := []byte(`{"spec":{"containers":[{"name":"app","image":"` + img.Ref + `"}]}}`)
	labelPatch := []byte(`{"metadata":{"labels":{"x":"y"}}}`)

	deletePod := func(ns string) func(context.Context, kubernetes.Interface) error {
		return func(ctx context.Context, c kubernetes.Interface) error {
			return c.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}
	}
	createPod := func(ns string) func(context.Context, kubernetes.Interface) error {
		return func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Pods(ns).Create(ctx, fntest.Pod(ns, "intruder", img.Ref, false),
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	patchPod := func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Pods(appNS).Patch(ctx, pod.Name, types.StrategicMergePatchType, imagePatch,
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	patchDeployment := func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AppsV1().Deployments(appNS).Patch(ctx, "web", types.StrategicMergePatchType, labelPatch,
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	listPods := func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Pods(appNS).List(ctx, metav1.ListOptions{})
		return err
	}
	getPod := func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Pods(appNS).Get(ctx, pod.Name, metav1.GetOptions{})
		return err
	}
	listSecrets := func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		return err
	}
	listNodes := func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err
	}
	deleteDeployment := func(ctx context.Context, c kubernetes.Interface) error {
		return c.AppsV1().Deployments(appNS).Delete(ctx, "web", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	}

	tests := []struct {
		identity, what string
		call           func(context.Context, kubernetes.Interface) error
	}{
		{"compute-spec", "delete a pod", deletePod(appNS)},
		{"compute-spec", "create a pod", createPod(appNS)},
		{"compute-spec", "delete a Deployment", deleteDeployment},
		{"compute-spec", "read Secrets", listSecrets},
		{"pre-pull", "patch a Deployment", patchDeployment},
		{"pre-pull", "patch the planned pod", patchPod},
		{"pre-pull", "run a pod outside the pre-pull namespace", createPod(appNS)},
		{"pre-pull", "read Secrets", listSecrets},
		{"patch-pod", "delete a pod", deletePod(appNS)},
		{"patch-pod", "read Secrets", listSecrets},
		{"patch-pod", "list nodes", listNodes},
		{"patch-pod", "patch a Deployment", patchDeployment},
		{"patch-pod", "create a pod", createPod(appNS)},
		{"verify", "create a pod", createPod(appNS)},
		{"verify", "delete a pod", deletePod(appNS)},
		{"verify", "read Secrets", listSecrets},
		{"verify", "patch a Deployment", patchDeployment},
		{"receiver", "get a pod", getPod},
		{"receiver", "read Secrets", listSecrets},
	}
	for _, tt := range tests {
		t.Run(tt.identity+"/"+tt.what, func(t *testing.T) {
			id, ok := ids[tt.identity]
			if !ok {
				t.Fatalf("config/rbac has no ServiceAccount inplace-%s", tt.identity)
			}
			err := tt.call(t.Context(), id.client)
			if !apierrors.IsForbidden(err) {
				t.Fatalf("err = %v; want Forbidden", err)
			}
		})
	}

	// And what the roles do grant is granted: the same calls succeed for
	// the function whose job they are (so the refusals above are RBAC).
	allowed := []struct {
		identity, what string
		call           func(context.Context, kubernetes.Interface) error
	}{
		{"patch-pod", "patch the planned pod", patchPod},
		{"verify", "patch the pod back", patchPod},
		{"compute-spec", "patch a Deployment", patchDeployment},
		{"compute-spec", "list pods", listPods},
		{"pre-pull", "run a pod in the pre-pull namespace", createPod(ns)},
		{"pre-pull", "list nodes (its cache)", listNodes},
		{"verify", "list pods (its cache)", listPods},
	}
	for _, tt := range allowed {
		t.Run(tt.identity+"/may "+tt.what, func(t *testing.T) {
			if err := tt.call(t.Context(), ids[tt.identity].client); err != nil {
				t.Fatalf("err = %v; want it allowed", err)
			}
		})
	}
}
