package main

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// gateType is the project's readiness gate.
const gateType = "inplace.dev/ready"

// storageClass is the benchmark's own class of static volumes: the test
// world runs no provisioner, so each StatefulSet's volumes are made ahead,
// pre-bound to the claims its controller will create, and the real
// PersistentVolume controller binds them.
const storageClass = "inplace-bench-static"

// workload is one benchmark workload: a Deployment or a StatefulSet (with a
// claim per pod), a readiness gate and a Service.
type workload struct {
	Kind      string // "Deployment" or "StatefulSet"
	Namespace string
	Name      string
	Image     string
	Replicas  int32
	Gate      bool
	// Annotations opt the workload in (nil: a native rollout's workload).
	Annotations map[string]string
	// MaxUnavailable and MaxSurge set the native rolling update; nil keeps
	// the API server's defaults (Deployment 25%/25%, StatefulSet 1).
	MaxUnavailable, MaxSurge *intstr.IntOrString
	// SchedulerName and PodLabels, when set, go to the pod template.
	SchedulerName string
	// Real: the pod runs the programs of test/images on real nodes, Ready
	// on their /readyz; Shape adds a sidecar and an init container.
	Real  bool
	Shape podShape
	// VolumeDir holds a StatefulSet's hostPath volumes (created by the
	// node when missing); empty: defaultVolumeDir, which simulated nodes
	// never touch.
	VolumeDir string
}

// defaultVolumeDir is where the volumes of simulated nodes' StatefulSets
// would be.
const defaultVolumeDir = "/var/lib/inplace-bench"

// key is how rollout events name the workload.
func (w workload) key() string { return w.Kind + "/" + w.Namespace + "/" + w.Name }

func (w workload) selector() string { return "app=" + w.Name }

func (w workload) template() corev1.PodTemplateSpec {
	spec := corev1.PodSpec{
		SchedulerName: w.SchedulerName,
		Containers: []corev1.Container{{
			Name: "app", Image: w.Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Env:   []corev1.EnvVar{{Name: "APP_MODE", Value: "bench"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
		}},
	}
	if w.Real {
		realContainers(&spec, w.Shape)
	}
	if w.Gate {
		spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gateType}}
	}
	if w.Kind == "StatefulSet" {
		spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": w.Name}}, Spec: spec}
}

// create makes the workload, its Service and, for a StatefulSet, its
// volumes.
func (w workload) create(ctx context.Context, c kubernetes.Interface) error {
	if err := w.createService(ctx, c); err != nil {
		return err
	}
	meta := metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace, Annotations: w.Annotations}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.Name}}
	var err error
	switch w.Kind {
	case "Deployment":
		d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: &w.Replicas, Selector: sel, Template: w.template()}}
		if w.MaxUnavailable != nil {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: w.MaxUnavailable, MaxSurge: w.MaxSurge}}
		}
		_, err = c.AppsV1().Deployments(w.Namespace).Create(ctx, d, metav1.CreateOptions{})
	case "StatefulSet":
		if err := w.createVolumes(ctx, c); err != nil {
			return err
		}
		s := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: &w.Replicas, Selector: sel,
			ServiceName: w.Name, PodManagementPolicy: appsv1.ParallelPodManagement, Template: w.template(),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr(storageClass),
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
		if w.MaxUnavailable != nil {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: w.MaxUnavailable}}
		}
		_, err = c.AppsV1().StatefulSets(w.Namespace).Create(ctx, s, metav1.CreateOptions{})
	default:
		return fmt.Errorf("workload kind %q", w.Kind)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", w.key(), err)
	}
	return nil
}

// createService makes the workload's Service: headless for a StatefulSet
// on simulated nodes, as its serviceName wants; on real nodes a virtual IP
// always, so that the traffic probe goes through kube-proxy to the Ready
// endpoints as it does for a Deployment rather than to DNS answers cached
// from before a pod left.
func (w workload) createService(ctx context.Context, c kubernetes.Interface) error {
	svc := w.service()
	if _, err := c.CoreV1().Services(w.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

func (w workload) service() *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": w.Name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}
	if w.Kind == "StatefulSet" && !w.Real {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	return svc
}

// createVolumes makes one static volume per replica, pre-bound to the claim
// the StatefulSet controller will make for it (data-<name>-<ordinal>).
func (w workload) createVolumes(ctx context.Context, c kubernetes.Interface) error {
	if err := ensureStorageClass(ctx, c); err != nil {
		return err
	}
	for _, pv := range w.volumes() {
		if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create volume %s: %w", pv.Name, err)
		}
	}
	return nil
}

// volumes are the StatefulSet's static volumes, one per replica, each a
// hostPath directory of its own under VolumeDir.
func (w workload) volumes() []*corev1.PersistentVolume {
	dir := cmp.Or(w.VolumeDir, defaultVolumeDir)
	var out []*corev1.PersistentVolume
	for i := range w.Replicas {
		claim := fmt.Sprintf("data-%s-%d", w.Name, i)
		out = append(out, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace + "-" + claim},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              storageClass,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: w.Namespace, Name: claim},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: filepath.Join(dir, w.Namespace, claim), Type: ptr(corev1.HostPathDirectoryOrCreate)}},
			}})
	}
	return out
}

func ensureStorageClass(ctx context.Context, c kubernetes.Interface) error {
	mode := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: storageClass},
		Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &mode}
	_, err := c.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create storage class: %w", err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
