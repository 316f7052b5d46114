package knative

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Services of the node, each backed by a host process the proxy routes to.
const (
	IngressService    = "broker-ingress"
	FilterService     = "broker-filter"
	DispatcherService = "imc-dispatcher"
)

// install puts Knative Eventing's CRDs (core and in-memory channel), its
// ConfigMaps, Knative Serving's Service CRD (function services are
// Addressables here, see Serve) and the objects its reconcilers check
// into the API server.
func (n *Node) install(ctx context.Context) error {
	c := n.World.Client()
	_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	servingCRD, err := servingServiceCRD(filepath.Dir(filepath.Dir(n.bin)))
	if err != nil {
		return err
	}
	cfg := filepath.Join(n.bin, "config")
	crds, err := readFiles(filepath.Join(cfg, "core", "resources", "*.yaml"),
		filepath.Join(cfg, "channels", "in-memory-channel", "resources", "*.yaml"), servingCRD)
	if err != nil {
		return err
	}
	if err := n.apply.create(ctx, crds...); err != nil {
		return err
	}
	if err := n.apply.waitCRDs(ctx, crds); err != nil {
		return err
	}
	cms, err := readFiles(filepath.Join(cfg, "core", "configmaps", "*.yaml"),
		filepath.Join(cfg, "channels", "in-memory-channel", "configmaps", "*.yaml"))
	if err != nil {
		return err
	}
	if err := n.apply.create(ctx, cms...); err != nil {
		return err
	}
	for _, s := range []string{IngressService, FilterService, DispatcherService} {
		if err := n.service(ctx, s); err != nil {
			return err
		}
	}
	return n.dispatcherDeployment(ctx)
}

// service creates a Service without selector and an EndpointSlice that
// marks it Ready: the Broker and channel reconcilers check the slices.
func (n *Node) service(ctx context.Context, name string) error {
	c := n.World.Client()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: SystemNamespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := c.CoreV1().Services(SystemNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("service %s: %w", name, err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: SystemNamespace, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{DocumentationAddress},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	_, err := c.DiscoveryV1().EndpointSlices(SystemNamespace).Create(ctx, slice, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("endpointslice %s: %w", name, err)
	}
	return nil
}

// dispatcherDeployment is the in-memory channel dispatcher's Deployment,
// scaled to 0 (the dispatcher is a host process): the channel reconciler
// only checks that it is Available.
func (n *Node) dispatcherDeployment(ctx context.Context) error {
	labels := map[string]string{"messaging.knative.dev/channel": "in-memory-channel", "messaging.knative.dev/role": "dispatcher"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: DispatcherService, Namespace: SystemNamespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "dispatcher", Image: "host-process/channel_dispatcher"}}}}},
	}
	_, err := n.World.Client().AppsV1().Deployments(SystemNamespace).Create(ctx, d, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("deployment %s: %w", DispatcherService, err)
	}
	return nil
}

// servingServiceCRD is the path of Knative Serving's Service CRD in the
// knative.dev/serving module the main module pins (downloaded if needed).
func servingServiceCRD(moduleRoot string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "knative.dev/serving")
	cmd.Dir = moduleRoot
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download knative.dev/serving: %w", err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download knative.dev/serving: %s %v", strings.TrimSpace(m.Error), err)
	}
	return filepath.Join(m.Dir, "config", "core", "300-resources", "service.yaml"), nil
}
