package fntest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/inplace-dev/inplace/test/world"
)

// DefaultNamespace is the namespace the rbac.yaml files are written for.
const DefaultNamespace = "inplace-system"

// Identity applies a function's rbac.yaml with its namespace moved to ns
// and its cluster-scoped names made unique to ns (removed when the test
// ends), mints a token for its ServiceAccount, and returns a client that
// acts as that ServiceAccount and nothing more.
func Identity(t testing.TB, w *world.World, rbacYAML []byte, ns string) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(IdentityConfig(t, w, rbacYAML, ns))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// IdentityConfig is Identity's client configuration (to wrap its transport).
func IdentityConfig(t testing.TB, w *world.World, rbacYAML []byte, ns string) *rest.Config {
	t.Helper()
	ctx := t.Context()
	objs := decode(t, bytes.ReplaceAll(rbacYAML, []byte(DefaultNamespace), []byte(ns)))
	sa := ""
	for _, o := range objs {
		if s, ok := o.(*corev1.ServiceAccount); ok {
			sa = s.Name
		}
		create(t, w, rename(o, ns))
	}
	if sa == "" {
		t.Fatal("rbac.yaml has no ServiceAccount")
	}
	_, rc, err := w.Cluster.MintKubeconfig(ctx, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func decode(t testing.TB, b []byte) []runtime.Object {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufioReader(b))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		o, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decode rbac.yaml: %v\n%s", err, doc)
		}
		out = append(out, o)
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

// rename makes cluster-scoped names (and references to them) unique to ns.
func rename(o runtime.Object, ns string) runtime.Object {
	switch v := o.(type) {
	case *rbacv1.ClusterRole:
		v.Name += "-" + ns
	case *rbacv1.ClusterRoleBinding:
		v.Name += "-" + ns
		v.RoleRef.Name += "-" + ns
	case *rbacv1.RoleBinding:
		if v.RoleRef.Kind == "ClusterRole" {
			v.RoleRef.Name += "-" + ns
		}
	}
	return o
}

func create(t testing.TB, w *world.World, o runtime.Object) {
	t.Helper()
	ctx, c := t.Context(), w.Client()
	var err error
	switch v := o.(type) {
	case *corev1.ServiceAccount:
		_, err = c.CoreV1().ServiceAccounts(v.Namespace).Create(ctx, v, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = c.RbacV1().Roles(v.Namespace).Create(ctx, v, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = c.RbacV1().RoleBindings(v.Namespace).Create(ctx, v, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		_, err = c.RbacV1().ClusterRoles().Create(ctx, v, metav1.CreateOptions{})
		t.Cleanup(func() { cleanup(c.RbacV1().ClusterRoles().Delete, v.Name) })
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, v, metav1.CreateOptions{})
		t.Cleanup(func() { cleanup(c.RbacV1().ClusterRoleBindings().Delete, v.Name) })
	default:
		t.Fatalf("rbac.yaml: unexpected %T", o)
	}
	if err != nil {
		t.Fatalf("create %T: %v", o, err)
	}
}

func cleanup(del func(context.Context, string, metav1.DeleteOptions) error, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = del(ctx, name, metav1.DeleteOptions{})
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
