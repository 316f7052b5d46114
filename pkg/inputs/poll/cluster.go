package poll

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Cache is what the poller reads of the cluster (kube.Cache).
type Cache interface {
	OwnerOf(pod *corev1.Pod) (kube.Workload, bool, error)
	ListPods(selector labels.Selector) ([]*corev1.Pod, error)
}

// FromCluster lists the workloads that want polling: each pod's owner that
// opted in, is not paused and has a poll interval (its own or d's), with
// the images of the pods it owns and the pull secrets they name.
func FromCluster(c Cache, d policy.Defaults) ([]Watch, error) {
	pods, err := c.ListPods(labels.Everything())
	if err != nil {
		return nil, err
	}
	byOwner := map[string]*Watch{}
	var order []string
	for _, pod := range pods {
		w, ok, err := c.OwnerOf(pod)
		if err != nil || !ok {
			continue
		}
		key := w.Ref.String()
		watch, seen := byOwner[key]
		if !seen {
			opts, err := policy.FromAnnotations(w.Meta.Annotations, d)
			if err != nil || !opts.OptedIn || opts.Paused || opts.PollInterval <= 0 {
				byOwner[key] = nil
				continue
			}
			watch = &Watch{Workload: key, Policy: opts.Policy, Interval: opts.PollInterval}
			byOwner[key] = watch
			order = append(order, key)
		}
		if watch != nil {
			addPod(watch, pod)
		}
	}
	out := make([]Watch, 0, len(order))
	for _, k := range order {
		out = append(out, *byOwner[k])
	}
	return out, nil
}

func addPod(w *Watch, pod *corev1.Pod) {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			r, err := imageref.Parse(c.Image)
			if err != nil || slices.Contains(w.Images, r) {
				continue
			}
			w.Images = append(w.Images, r)
		}
	}
	for _, s := range pod.Spec.ImagePullSecrets {
		ref := pod.Namespace + "/" + s.Name
		if !slices.Contains(w.Secrets, ref) {
			w.Secrets = append(w.Secrets, ref)
		}
	}
}
