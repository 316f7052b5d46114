package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFits(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"zone": "a", "kubernetes.io/hostname": "node-1"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			"pods": resource.MustParse("2"), "cpu": resource.MustParse("2"), "memory": resource.MustParse("1Gi"),
		}},
	}
	tainted := node.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}}
	withPins := func(op corev1.NodeSelectorOperator, key string, fields bool, values ...string) *corev1.Pod {
		req := corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
		term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req}}
		if fields {
			term = corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req}}
		}
		return &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}},
		}}}}
	}
	cpu := func(q string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": resource.MustParse(q)}}}}}}
	}
	tolerating := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}}}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		load nodeLoad
		want string // "" fits
	}{
		{"plain pod", &corev1.Pod{}, node, nodeLoad{}, ""},
		{"nodeSelector matches", &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{"zone": "a"}}}, node, nodeLoad{}, ""},
		{"nodeSelector differs", &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{"zone": "b"}}}, node, nodeLoad{}, "node(s) didn't match Pod's node affinity/selector"},
		{"matchFields metadata.name this node", withPins(corev1.NodeSelectorOpIn, "metadata.name", true, "node-1"), node, nodeLoad{}, ""},
		{"matchFields metadata.name other node", withPins(corev1.NodeSelectorOpIn, "metadata.name", true, "node-2"), node, nodeLoad{}, "node(s) didn't match Pod's node affinity/selector"},
		{"matchExpressions NotIn", withPins(corev1.NodeSelectorOpNotIn, "zone", false, "a"), node, nodeLoad{}, "node(s) didn't match Pod's node affinity/selector"},
		{"matchExpressions Exists", withPins(corev1.NodeSelectorOpExists, "zone", false), node, nodeLoad{}, ""},
		{"untolerated taint", &corev1.Pod{}, tainted, nodeLoad{}, "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"},
		{"tolerated taint", tolerating, tainted, nodeLoad{}, ""},
		{"too many pods", &corev1.Pod{}, node, nodeLoad{pods: 2}, "Too many pods"},
		{"cpu fits", cpu("1500m"), node, nodeLoad{requests: corev1.ResourceList{"cpu": resource.MustParse("500m")}}, ""},
		{"cpu exceeded", cpu("1600m"), node, nodeLoad{requests: corev1.ResourceList{"cpu": resource.MustParse("500m")}}, "Insufficient cpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := fits(tc.pod, tc.node, tc.load)
			if ok != (tc.want == "") || why != tc.want {
				t.Errorf("fits = %v %q, want %q", ok, why, tc.want)
			}
		})
	}
}

func TestUnschedulableMessage(t *testing.T) {
	got := unschedulableMessage(3, []string{"Too many pods", "Too many pods", "node(s) were unschedulable"})
	want := "0/3 nodes are available: 1 node(s) were unschedulable, 2 Too many pods."
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
