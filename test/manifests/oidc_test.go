package manifests_test

import (
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"knative.dev/eventing/pkg/auth"

	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
)

// TestSenderVerificationWiring: in config/overlays/knative-oidc each
// function service checks the audience its Trigger's subscriber names and
// only the subject Knative Eventing gives that Trigger's OIDC
// ServiceAccount (its own name function), and its ServiceAccount may read
// the issuer keys; config/overlays/knative leaves verification off (a
// cluster without authentication-oidc sends no token).
func TestSenderVerificationWiring(t *testing.T) {
	objs := render(t, filepath.Join(root(t), "config", "overlays", "knative-oidc"))
	crb := named(objs, "ClusterRoleBinding", "inplace-issuer-discovery")
	if crb == nil {
		t.Fatal("no ClusterRoleBinding inplace-issuer-discovery")
	}
	var binding rbacv1.ClusterRoleBinding
	fromUnstructured(t, crb, &binding)
	if binding.RoleRef.Name != "system:service-account-issuer-discovery" {
		t.Errorf("inplace-issuer-discovery binds %s", binding.RoleRef.Name)
	}
	n := 0
	for _, o := range objs {
		if o.GetKind() != "Trigger" {
			continue
		}
		n++
		var tr eventingv1.Trigger
		fromUnstructured(t, o, &tr)
		svc := named(objs, "Service", tr.Spec.Subscriber.Ref.Name)
		if svc == nil || tr.Spec.Subscriber.Audience == nil {
			t.Fatalf("Trigger %s: subscriber service %v, audience %v", tr.Name, svc, tr.Spec.Subscriber.Audience)
		}
		spec := podSpec(t, svc)
		env := envOf(spec.Containers[0])
		if got, want := env["INPLACE_OIDC_AUDIENCE"], *tr.Spec.Subscriber.Audience; got != want {
			t.Errorf("service %s checks audience %q, its Trigger sends %q", svc.GetName(), got, want)
		}
		sa := auth.GetOIDCServiceAccountNameForResource(eventingv1.SchemeGroupVersion.WithKind("Trigger"), tr.ObjectMeta)
		if got, want := env["INPLACE_OIDC_SUBJECTS"], "system:serviceaccount:"+tr.Namespace+":"+sa; got != want {
			t.Errorf("service %s allows %q, its Trigger's OIDC ServiceAccount is %q", svc.GetName(), got, want)
		}
		if !slices.ContainsFunc(binding.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == spec.ServiceAccountName && s.Namespace == svc.GetNamespace()
		}) {
			t.Errorf("service %s runs as %s, which inplace-issuer-discovery does not bind", svc.GetName(), spec.ServiceAccountName)
		}
	}
	if n != 4 {
		t.Errorf("%d Triggers, want 4", n)
	}
	for _, o := range render(t, filepath.Join(root(t), "config", "overlays", "knative")) {
		if o.GetKind() == "Service" && isKnative(o) {
			if a, ok := envOf(podSpec(t, o).Containers[0])["INPLACE_OIDC_AUDIENCE"]; ok {
				t.Errorf("config/overlays/knative: %s verifies senders (%q) where the cluster may send no token", o.GetName(), a)
			}
		}
	}
}

func fromUnstructured(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatal(err)
	}
}

func envOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}
