package traffic

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func cutEnv(e string) (string, string, bool) { return strings.Cut(e, "=") }

func intOrString(port int) intstr.IntOrString { return intstr.FromInt32(int32(port)) }

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// terminated says how the probe's container ended, for an error.
func terminated(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("container %s exited %d (%s): %s", cs.Name, t.ExitCode, t.Reason, t.Message)
		}
	}
	return pod.Status.Message
}
