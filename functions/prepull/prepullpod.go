package prepull

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/pulls"
)

// Labels and annotations of pre-pull pods.
const (
	LabelManagedBy = pulls.LabelManagedBy
	LabelComponent = pulls.LabelComponent
	ManagedBy      = pulls.ManagedBy
	Component      = pulls.Component
	LabelImages    = pulls.LabelImages
	// AnnotationImages lists, comma-separated, the images a pre-pull pod
	// pulls (its label of the same name holds their key).
	AnnotationImages = "inplace.dev/prepull-images"
	// AnnotationCreated is when pre-pull created the pod, to the
	// nanosecond (creationTimestamp has whole seconds: a pull timed from it
	// reads up to a second long).
	AnnotationCreated = "inplace.dev/prepull-created"
)

// Selector selects every pre-pull pod.
const Selector = pulls.Selector

// targets are the plan's distinct target images, sorted.
func targets(plan events.Plan) []string {
	var out []string
	for _, c := range plan.Containers {
		if !slices.Contains(out, c.ToImage) {
			out = append(out, c.ToImage)
		}
	}
	slices.Sort(out)
	return out
}

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// imagesKey names a set of images in a label value.
func imagesKey(images []string) string { return pulls.Key(images) }

// slotName is the name of pre-pull slot i on node.
func slotName(node string, i int) string {
	return fmt.Sprintf("inplace-prepull-%s-%d", hashOf(node)[:12], i)
}

// podFor is the pre-pull pod of images on node, of architecture arch (its
// status.nodeInfo.architecture), in slot name. Each container runs the
// exit program from its volume (exit.go), never a command of the image; on
// an architecture it has no exit program for, /bin/true, and an image
// without it fails to start after its pull (Evaluate counts it pulled).
func podFor(namespace, name, node, arch string, images []string, created time.Time) *corev1.Pod {
	tiny := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("8Mi")}
	// No CPU limit: the runtime starts the sandbox and each container
	// inside the pod's cgroup (runc init runs there), so a CFS quota of a
	// few millicores stretches each start to seconds (10m: a 5 s sandbox
	// on a real node, and the kubelet reports the pull only after it).
	// The containers exit at once: there is nothing for a limit to bound.
	limit := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")}
	command, mounts, volumes := []string{"/bin/true"}, []corev1.VolumeMount(nil), []corev1.Volume(nil)
	if _, ok := exitProgram(arch); ok {
		command = []string{exitPath}
		mounts = []corev1.VolumeMount{{Name: exitVolume, MountPath: exitMount, ReadOnly: true}}
		volumes = []corev1.Volume{{Name: exitVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: exitConfigMap(namespace).Name},
			Items:                []corev1.KeyToPath{{Key: exitKey(arch), Path: "exit"}},
			DefaultMode:          new(int32(0o555)),
		}}}}
	}
	var containers []corev1.Container
	for i, img := range images {
		containers = append(containers, corev1.Container{
			Name:            fmt.Sprintf("pull-%d", i),
			Image:           img,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         command,
			VolumeMounts:    mounts,
			Resources:       corev1.ResourceRequirements{Requests: tiny, Limits: limit},
			SecurityContext: restricted(),
		})
	}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels: map[string]string{LabelManagedBy: ManagedBy, LabelComponent: Component,
				LabelImages: imagesKey(images)},
			Annotations: map[string]string{AnnotationImages: strings.Join(images, ","),
				AnnotationCreated: created.UTC().Format(time.RFC3339Nano)},
		},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			RestartPolicy:                 corev1.RestartPolicyNever,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:                    containers,
			Volumes:                       volumes,
			AutomountServiceAccountToken:  new(false),
			EnableServiceLinks:            new(false),
			TerminationGracePeriodSeconds: &zero,
			// Pod Security "restricted": the pre-pull namespace enforces it.
			// A numeric non-root user, so an image whose own user is root
			// still starts (the pull is what counts).
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: new(true), RunAsUser: new(int64(65534)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		},
	}
}

// createdAt is when pre-pull created the pod: its own stamp, else (a pod
// made before the stamp existed) the API server's, in whole seconds.
func createdAt(p *corev1.Pod) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, p.Annotations[AnnotationCreated]); err == nil {
		return t
	}
	return p.CreationTimestamp.Time
}

// restricted is a container security context Pod Security "restricted"
// admits: no privilege escalation, no capability, a read-only root.
func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}
