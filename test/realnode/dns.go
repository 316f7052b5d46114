package realnode

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/nodepool"
	"github.com/inplace-dev/inplace/test/proc"
)

// DNS objects in kube-system.
const (
	dnsService = "kube-dns"
	dnsUser    = "inplace:coredns"
)

// corefile serves cluster.local (and reverse lookups) from the API server
// on the host address, port 53; names outside the cluster get no answer
// (the machine has no upstream resolver to forward to).
func corefile(hostIP, kubeconfig string, readyPort int) string {
	return fmt.Sprintf(`.:53 {
    bind %s
    errors
    ready 127.0.0.1:%d
    kubernetes %s in-addr.arpa ip6.arpa {
        kubeconfig %s inplace
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
}
`, hostIP, readyPort, ClusterDomain, kubeconfig)
}

// startDNS runs CoreDNS on the host address under a user of its own (the
// role kubeadm gives CoreDNS) and makes the kube-dns Service at
// DNSServiceIP with an EndpointSlice pointing at it.
func (n *Nodes) startDNS(ctx context.Context) error {
	if err := n.dnsRBAC(ctx); err != nil {
		return err
	}
	dir := n.host.Dir()
	kubeconfig := filepath.Join(dir, "coredns.kubeconfig")
	if err := n.opts.Cluster.WriteKubeconfig(kubeconfig, dnsUser); err != nil {
		return err
	}
	port, err := nodepool.FreePort()
	if err != nil {
		return err
	}
	conf := filepath.Join(dir, "Corefile")
	if err := writeFiles(map[string][]byte{conf: []byte(corefile(n.host.IP(), kubeconfig, port))}); err != nil {
		return err
	}
	if n.dns, err = proc.Start(dir, "coredns", filepath.Join(n.opts.BinDir, "coredns"), []string{"-conf", conf}); err != nil {
		return err
	}
	n.dnsReady = "http://127.0.0.1:" + strconv.Itoa(port) + "/ready"
	return n.dnsService(ctx)
}

func (n *Nodes) dnsRBAC(ctx context.Context) error {
	rbac := n.client.RbacV1()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: dnsUser},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		},
	}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("coredns role: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: dnsUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: dnsUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: dnsUser}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("coredns role binding: %w", err)
	}
	return nil
}

// dnsService makes kube-dns in kube-system: a Service without a selector
// at DNSServiceIP and an EndpointSlice with CoreDNS's host address, which
// the nodes' kube-proxy turn into their DNAT rules.
func (n *Nodes) dnsService(ctx context.Context) error {
	ports := []corev1.ServicePort{
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
		{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: dnsService, Namespace: metav1.NamespaceSystem, Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec:       corev1.ServiceSpec{ClusterIP: DNSServiceIP, Ports: ports},
	}
	if _, err := n.client.CoreV1().Services(metav1.NamespaceSystem).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube-dns service: %w", err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: dnsService + "-host", Namespace: metav1.NamespaceSystem, Labels: map[string]string{
			discoveryv1.LabelServiceName: dnsService,
			discoveryv1.LabelManagedBy:   "realnode.inplace.dev",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{n.host.IP()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("dns"), Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolUDP)},
			{Name: ptr.To("dns-tcp"), Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolTCP)},
		},
	}
	if _, err := n.client.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube-dns endpoint slice: %w", err)
	}
	return nil
}

// deleteDNS removes the kube-dns Service and its slice, so that a cluster
// that outlives the pool does not point at a CoreDNS that is gone.
func (n *Nodes) deleteDNS(ctx context.Context) {
	_ = n.client.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem).Delete(ctx, dnsService+"-host", metav1.DeleteOptions{})
	_ = n.client.CoreV1().Services(metav1.NamespaceSystem).Delete(ctx, dnsService, metav1.DeleteOptions{})
}

// waitNetwork waits until CoreDNS has synced with the API server and
// every node's kube-proxy has programmed its rules (its healthz is 200
// once it synced).
func (n *Nodes) waitNetwork(ctx context.Context) error {
	urls := []string{n.dnsReady}
	for _, nd := range n.nodes {
		urls = append(urls, "http://"+nd.ip+":10256/healthz")
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := n.exited(); err != nil {
			return false, err
		}
		for _, u := range urls {
			if !cluster.HTTPOK(ctx, hc, u) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for CoreDNS and kube-proxy: %w", err)
	}
	return nil
}
