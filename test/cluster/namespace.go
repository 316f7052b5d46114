package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// NewNamespace creates a namespace named after the test (plus a random
// suffix) and deletes it when the test ends. Deletion is not awaited: the
// namespace controller empties it in the background.
func (c *Cluster) NewNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   namespaceName(t.Name()),
		Labels: map[string]string{"inplace.dev/test": "true"},
	}}
	if _, err := c.client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := c.client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// namespaceName turns a test name into a DNS label: lower case,
// [a-z0-9-], at most 63 characters including a 6-character random suffix.
func namespaceName(test string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(test) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			sb.WriteByte('-')
		}
	}
	base := strings.Trim(sb.String(), "-")
	if len(base) > 50 {
		base = strings.TrimRight(base[:50], "-")
	}
	if base == "" {
		base = "test"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return base + "-" + hex.EncodeToString(b)
}

// MintKubeconfig gives serviceAccount in namespace an identity: it creates
// the ServiceAccount if missing, requests a token for it (TokenRequest API,
// valid 24h) and writes a kubeconfig using it. What the identity may do is
// what RBAC grants the ServiceAccount.
func (c *Cluster) MintKubeconfig(ctx context.Context, namespace, serviceAccount string) (string, *rest.Config, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: namespace}}
	_, err := c.client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return "", nil, fmt.Errorf("mint kubeconfig: create serviceaccount %s/%s: %w", namespace, serviceAccount, err)
	}
	expiry := int64(24 * 60 * 60)
	tr, err := c.client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("mint kubeconfig: token for %s/%s: %w", namespace, serviceAccount, err)
	}
	path := filepath.Join(c.dir, fmt.Sprintf("sa-%s-%s.kubeconfig", namespace, serviceAccount))
	user := "system:serviceaccount:" + namespace + ":" + serviceAccount
	rc, err := writeKubeconfig(path, c.server, c.pki.ca.cert,
		credentials{user: user, token: tr.Status.Token, defaultN: namespace})
	if err != nil {
		return "", nil, fmt.Errorf("mint kubeconfig: %w", err)
	}
	return path, rc, nil
}
