package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/kube"
)

// containersFlag registers -c/--container, which means the same in every
// command: container names, repeated or comma-separated (-c app -c sidecar
// is -c app,sidecar).
func containersFlag(fs *pflag.FlagSet, dst *[]string, usage string) {
	fs.StringSliceVarP(dst, "container", "c", nil, usage+" (repeat or comma-separate: -c app,sidecar)")
}

// checkContainers refuses a -c naming a container the workload's pods do
// not have (regular containers and native sidecars), listing those they have.
func checkContainers(w kube.Workload, names []string) error {
	spec := podSpecOf(w.Object)
	if spec == nil {
		return nil
	}
	var have []string
	for _, c := range spec.Containers {
		have = append(have, c.Name)
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			have = append(have, c.Name)
		}
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return fmt.Errorf("-c %s: %s has no container %s (it has %s)", n, w.Ref, n, strings.Join(have, ", "))
		}
	}
	return nil
}

// podSpecOf is the pod spec (template) of a workload object.
func podSpecOf(obj any) *corev1.PodSpec {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &o.Spec.Template.Spec
	case *appsv1.DaemonSet:
		return &o.Spec.Template.Spec
	case *appsv1.ReplicaSet:
		return &o.Spec.Template.Spec
	case *corev1.Pod:
		return &o.Spec
	}
	return nil
}
