package controllertest

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// Spec is a workload for Create.
type Spec struct {
	Kind        string // Deployment (default), StatefulSet or DaemonSet (one pod per node)
	Name        string
	Replicas    int32
	MinReady    int32
	Annotations map[string]string
	Containers  []corev1.Container
	Init        []corev1.Container
	// Edit changes the object before it is created.
	Edit func(obj any)
}

// Create makes a workload and waits until its pods are Ready, in the API
// server and in the Env's cache.
func (e *Env) Create(s Spec) {
	e.T.Helper()
	ctx := e.T.Context()
	labels := map[string]string{"app": s.Name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: s.Containers, InitContainers: s.Init}}
	meta := metav1.ObjectMeta{Name: s.Name, Namespace: e.NS, Annotations: s.Annotations}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	edit := func(obj any) {
		if s.Edit != nil {
			s.Edit(obj)
		}
	}
	var err error
	switch s.Kind {
	case "StatefulSet":
		sts := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: &s.Replicas, Selector: sel,
			Template: tmpl, PodManagementPolicy: appsv1.ParallelPodManagement}}
		edit(sts)
		_, err = e.W.Client().AppsV1().StatefulSets(e.NS).Create(ctx, sts, metav1.CreateOptions{})
	case "DaemonSet":
		s.Replicas = int32(len(e.W.NodeNames()))
		ds := &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}}
		edit(ds)
		_, err = e.W.Client().AppsV1().DaemonSets(e.NS).Create(ctx, ds, metav1.CreateOptions{})
	default:
		d := &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &s.Replicas, MinReadySeconds: s.MinReady, Selector: sel, Template: tmpl}}
		edit(d)
		_, err = e.W.Client().AppsV1().Deployments(e.NS).Create(ctx, d, metav1.CreateOptions{})
	}
	if err != nil {
		e.T.Fatalf("create %s: %v", s.Name, err)
	}
	if _, err := world.WaitPods(ctx, e.W.Client(), e.NS, "app="+s.Name, 2*time.Minute,
		"all Ready", world.AllReady(int(s.Replicas))); err != nil {
		e.T.Fatal(err)
	}
	kind := s.Kind
	if kind == "" {
		kind = "Deployment"
	}
	e.Cached(events.ObjectRef{Kind: kind, Namespace: e.NS, Name: s.Name}, int(s.Replicas))
}

// Cached waits until the Env's cache shows n Ready pods of the workload.
func (e *Env) Cached(ref events.ObjectRef, n int) {
	e.T.Helper()
	err := world.Eventually(e.T.Context(), 30*time.Second, "cache sees "+ref.String(), func(context.Context) (bool, error) {
		pods, err := e.Cache.PodsOf(ref)
		ready := 0
		for _, p := range pods {
			if inplace.Ready(p) {
				ready++
			}
		}
		return err == nil && ready == n, err
	})
	if err != nil {
		e.T.Fatal(err)
	}
}
