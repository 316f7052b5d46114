package cluster_test

import (
	"testing"

	"github.com/inplace-dev/inplace/test/cluster"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestMain(m *testing.M) { cluster.Main(m, cluster.Options{}) }

func TestAdminKubeconfig(t *testing.T) {
	c := cluster.Shared(t)
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		t.Fatalf("load admin kubeconfig: %v", err)
	}
	cs := kubernetes.NewForConfigOrDie(rc)
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.Major != "1" || v.Minor != "35" {
		t.Errorf("server version = %s.%s, want 1.35", v.Major, v.Minor)
	}
	ns, err := cs.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{})
	if err != nil || ns.Name != "kube-system" {
		t.Fatalf("get kube-system with admin kubeconfig: %v", err)
	}
}

// TestMintKubeconfigRBAC shows a minted ServiceAccount identity is held to
// its Role: allowed inside it, Forbidden outside it.
func TestMintKubeconfigRBAC(t *testing.T) {
	c := cluster.Shared(t)
	ns := c.NewNamespace(t)
	ctx := t.Context()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := c.Client().RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create role: %v", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "fn-pod-reader", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "fn", Namespace: ns}},
	}
	if _, err := c.Client().RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create rolebinding: %v", err)
	}
	path, rc, err := c.MintKubeconfig(ctx, ns, "fn")
	if err != nil {
		t.Fatalf("MintKubeconfig: %v", err)
	}
	fromFile, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load minted kubeconfig: %v", err)
	}
	tests := []struct {
		name      string
		call      func(kubernetes.Interface) error
		forbidden bool
	}{
		{"list pods inside the role", func(cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err
		}, false},
		{"list secrets", func(cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		}, true},
		{"list pods in another namespace", func(cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
			return err
		}, true},
		{"delete a pod", func(cs kubernetes.Interface) error {
			return cs.CoreV1().Pods(ns).Delete(ctx, "any", metav1.DeleteOptions{})
		}, true},
	}
	for cfgName, cfg := range map[string]*rest.Config{"rest.Config": rc, "kubeconfig file": fromFile} {
		cs := kubernetes.NewForConfigOrDie(cfg)
		for _, tc := range tests {
			t.Run(cfgName+"/"+tc.name, func(t *testing.T) {
				err := tc.call(cs)
				if got := apierrors.IsForbidden(err); got != tc.forbidden {
					t.Errorf("err = %v, forbidden = %v, want %v", err, got, tc.forbidden)
				}
				if !tc.forbidden && err != nil {
					t.Errorf("err = %v, want allowed", err)
				}
			})
		}
	}
}

// BenchmarkStart measures a control plane start (etcd, API server ready,
// controller-manager healthy with the default ServiceAccount made) and
// stop. The first iteration after a reboot or cache drop is the cold start.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		c, err := cluster.Start(b.Context(), cluster.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(c.StartDuration().Seconds(), "start-s")
		c.Stop()
	}
}
