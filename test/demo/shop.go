package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/knative"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

type shop struct {
	w   *world.World
	s   *stack.Stack     // `inplace run`, or
	kn  *knative.Project // Knative mode
	out io.Writer
}

func (sh *shop) ref(tag string) string { return sh.w.Registry.Host() + "/" + repo + ":" + tag }

// deploy creates the shop on the old image and waits until it is Ready.
func (sh *shop) deploy(ctx context.Context) error {
	c := sh.w.Client()
	if _, err := sh.w.Registry.Push(ctx, repo, oldTag); err != nil {
		return err
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shopNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if sh.kn != nil {
		// The ApiServerSource adapter restarts for a new namespace and
		// reports nothing it missed meanwhile: wait until it watches.
		if err := sh.kn.WaitWatching(ctx, shopNS, 2*time.Minute); err != nil {
			return err
		}
	}
	web, cart := int32(webPods), int32(cartPods)
	tmpl := func(app string, gate bool) corev1.PodTemplateSpec {
		t := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: sh.ref(oldTag)}}}}
		if sh.w.IsReal() {
			t.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: appPort}}
			t.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(appPort)}}}
		}
		if gate {
			t.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
		}
		return t
	}
	sel := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	fmt.Fprintf(sh.out, "▶ deploying the shop in namespace %s, on %s:%s\n", shopNS, repo, oldTag)
	fmt.Fprintf(sh.out, "  Deployment web (%d pods, readiness gate %s, inplace.dev/policy semver:minor, max-unavailable 50%%)\n", webPods, inplace.ReadinessGate)
	fmt.Fprintf(sh.out, "  Service web (port %d) in front of it\n", appPort)
	fmt.Fprintf(sh.out, "  StatefulSet cart (%d pods, inplace.dev/policy semver:minor)\n", cartPods)
	_, err := c.AppsV1().Deployments(shopNS).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"inplace.dev/policy": "semver:minor",
			"inplace.dev/max-unavailable": "50%", "inplace.dev/grace-seconds": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: &web, Selector: sel("web"), Template: tmpl("web", true)},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if err := sh.service(ctx); err != nil {
		return err
	}
	_, err = c.AppsV1().StatefulSets(shopNS).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cart", Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}},
		Spec: appsv1.StatefulSetSpec{Replicas: &cart, Selector: sel("cart"), Template: tmpl("cart", false),
			PodManagementPolicy: appsv1.ParallelPodManagement},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	for app, n := range map[string]int{"web": webPods, "cart": cartPods} {
		if _, err := world.WaitPods(ctx, c, shopNS, "app="+app, 2*time.Minute, "Ready", world.AllReady(n)); err != nil {
			return err
		}
	}
	fmt.Fprintf(sh.out, "  %d pods Ready\n", webPods+cartPods)
	return nil
}

// pod is what the table compares: the pod's status as its node reports
// it and, on real nodes, what the app running in it answers.
type pod struct {
	App, Node, IP, UID, Image, ImageID string
	Restarts                           int32
	Answer                             string
}

func (sh *shop) snapshot(ctx context.Context) (map[string]pod, error) {
	list, err := sh.w.Client().CoreV1().Pods(shopNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]pod{}
	for _, p := range list.Items {
		info := pod{App: p.Labels["app"], Node: p.Spec.NodeName, IP: p.Status.PodIP, UID: string(p.UID), Image: p.Spec.Containers[0].Image}
		if cs := world.ContainerStatus(&p, "app"); cs != nil {
			info.Restarts, info.ImageID = cs.RestartCount, cs.ImageID
		}
		if sh.w.IsReal() {
			if info.Answer, err = sh.ask(ctx, p.Name); err != nil {
				return nil, err
			}
		}
		out[p.Name] = info
	}
	return out, nil
}

// tag is the tag of an image reference, without registry or digest.
func tag(image string) string {
	image, _, _ = strings.Cut(image, "@")
	return image[strings.LastIndex(image, ":")+1:]
}
