package kube

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StripManagedFields drops metadata.managedFields from cached objects: it is
// about half of a pod's size and nothing here reads it.
func StripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
		m.GetObjectMeta().SetManagedFields(nil)
	}
	return obj, nil
}

// NewTransform is a cache's transform: managedFields dropped from every
// object, and a pod slimmed to what the functions read (slimPod), its
// repeated values shared with the other pods of the cache.
func NewTransform() func(any) (any, error) {
	in := newInterner()
	return func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			slimPod(in, p)
		}
		return StripManagedFields(obj)
	}
}

// slimPod keeps of a pod what the functions read from a cached one, and
// drops the rest (about half of its memory at 10,000 pods,
// BenchmarkCachedPod). Kept: metadata (but managedFields); of the spec the
// node, the restart policy, the readiness gates, the image pull secrets
// and of each container its name, image, pull policy, resources, resize
// and restart policies, and whether it has a preStop hook (an empty
// handler: patch-pod reads that there is one, not what it runs); of the
// status the phase, reason, message, observed generation, resize status,
// the conditions and of each container status its name, state, last
// state, readiness, restarts, image, image ID, container ID, started and
// resources. The pods in pod.updated events come from this cache, so they
// are slim too; a full pod is a GET away. Nothing writes a cached pod back
// whole (every write is a patch).
func slimPod(in *interner, p *corev1.Pod) {
	slimMeta(in, &p.ObjectMeta)
	s := &p.Spec
	*s = corev1.PodSpec{NodeName: in.str(s.NodeName), RestartPolicy: typed(in, s.RestartPolicy),
		ReadinessGates: in.readinessGates(s.ReadinessGates), ImagePullSecrets: s.ImagePullSecrets,
		InitContainers: slimContainers(in, s.InitContainers), Containers: slimContainers(in, s.Containers),
		EphemeralContainers: slimEphemeral(in, s.EphemeralContainers)}
	st := &p.Status
	*st = corev1.PodStatus{ObservedGeneration: st.ObservedGeneration, Phase: typed(in, st.Phase), Reason: in.str(st.Reason),
		Message: in.str(st.Message), Resize: st.Resize, Conditions: slimConditions(in, st.Conditions),
		InitContainerStatuses: slimStatuses(in, st.InitContainerStatuses), ContainerStatuses: slimStatuses(in, st.ContainerStatuses),
		EphemeralContainerStatuses: slimStatuses(in, st.EphemeralContainerStatuses)}
}

func slimMeta(in *interner, m *metav1.ObjectMeta) {
	m.Namespace, m.GenerateName = in.str(m.Namespace), in.str(m.GenerateName)
	m.Labels, m.Annotations = in.stringMap(m.Labels), in.stringMap(m.Annotations)
	m.OwnerReferences = in.ownerRefs(m.OwnerReferences)
	m.ManagedFields = nil
}

// exact is list in an array of its length: a decoder grows lists by
// appending, which leaves up to half of the array unused.
func exact[T any](list []T) []T {
	if cap(list) == len(list) {
		return list
	}
	return slices.Clone(list)
}

func slimContainers(in *interner, list []corev1.Container) []corev1.Container {
	list = exact(list)
	for i := range list {
		c := &list[i]
		hook := c.Lifecycle != nil && c.Lifecycle.PreStop != nil
		*c = corev1.Container{Name: in.str(c.Name), Image: in.str(c.Image), ImagePullPolicy: typed(in, c.ImagePullPolicy),
			Resources: slimResources(in, c.Resources), ResizePolicy: in.resizePolicy(c.ResizePolicy), RestartPolicy: c.RestartPolicy}
		if hook {
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{}}
		}
	}
	return list
}

func slimEphemeral(in *interner, list []corev1.EphemeralContainer) []corev1.EphemeralContainer {
	list = exact(list)
	for i := range list {
		c := &list[i]
		*c = corev1.EphemeralContainer{TargetContainerName: c.TargetContainerName, EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: in.str(c.Name), Image: in.str(c.Image), ImagePullPolicy: typed(in, c.ImagePullPolicy)}}
	}
	return list
}

func slimResources(in *interner, r corev1.ResourceRequirements) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Limits: in.resources(r.Limits), Requests: in.resources(r.Requests), Claims: r.Claims}
}

func slimConditions(in *interner, list []corev1.PodCondition) []corev1.PodCondition {
	list = exact(list)
	for i := range list {
		c := &list[i]
		c.Type, c.Status, c.Reason, c.Message = typed(in, c.Type), typed(in, c.Status), in.str(c.Reason), in.str(c.Message)
	}
	return list
}

func slimStatuses(in *interner, list []corev1.ContainerStatus) []corev1.ContainerStatus {
	list = exact(list)
	for i := range list {
		c := &list[i]
		var res *corev1.ResourceRequirements
		if c.Resources != nil {
			r := slimResources(in, *c.Resources)
			res = &r
		}
		*c = corev1.ContainerStatus{Name: in.str(c.Name), State: slimState(in, c.State), LastTerminationState: slimState(in, c.LastTerminationState),
			Ready: c.Ready, RestartCount: c.RestartCount, Image: in.str(c.Image), ImageID: in.str(c.ImageID), ContainerID: c.ContainerID,
			Started: c.Started, Resources: res}
	}
	return list
}

func slimState(in *interner, s corev1.ContainerState) corev1.ContainerState {
	if w := s.Waiting; w != nil {
		w.Reason, w.Message = in.str(w.Reason), in.str(w.Message)
	}
	if t := s.Terminated; t != nil {
		t.Reason, t.Message = in.str(t.Reason), in.str(t.Message)
	}
	return s
}
