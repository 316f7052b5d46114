package world_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// TestImageCachePerNode: the first pod pulls the image onto its node
// ("Successfully pulled"), the node reports it in status.images (after its
// image list refresh), a second
// pod on that node finds it "already present on machine" and never pulls,
// and a pod with imagePullPolicy Always pulls again anyway.
func TestImageCachePerNode(t *testing.T) {
	t.Parallel()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	skipOnReal(t, w)
	digest, err := w.Registry.Push(ctx, "inplace/cached", "v1", registry.WithSizeMB(8))
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	image := w.Registry.Host() + "/inplace/cached:v1"
	imageID := w.Registry.Host() + "/inplace/cached@" + digest
	node := w.NodeNames()[0]
	onNode := func(name string, policy corev1.PullPolicy) *corev1.Pod {
		p := simplePod(ns, name, image)
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		p.Spec.Containers[0].ImagePullPolicy = policy
		return p
	}

	first := runPod(t, w, onNode("first", corev1.PullIfNotPresent))
	pulled := waitEvent(t, w, first, "Pulled", "Successfully pulled image")
	t.Logf("first pull on %s: %s", node, pulled.Message)

	// The node lists the image only after its image list refresh and
	// status update: up to ~40s on a real kubelet.
	var n *corev1.Node
	err = world.Eventually(ctx, podTimeout, "node.status.images lists the pulled image", func(ctx context.Context) (bool, error) {
		var err error
		n, err = w.Client().CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && nodeHasImage(n, imageID, image, 8<<20), err
	})
	if err != nil {
		t.Errorf("node %s status.images = %+v, want %s and %s of at least 8MiB: %v", node, n.Status.Images, imageID, image, err)
	}

	second := runPod(t, w, onNode("second", corev1.PullIfNotPresent))
	waitEvent(t, w, second, "Pulled", "already present on machine")
	if evs, err := podEvents(ctx, w, second, "Pulling"); err != nil || len(evs) != 0 {
		t.Errorf("second pod Pulling events = %d (err %v), want none", len(evs), err)
	}
	if s := world.ContainerStatus(second, "app"); s.ImageID != imageID {
		t.Errorf("second pod imageID = %q, want %q", s.ImageID, imageID)
	}

	always := runPod(t, w, onNode("always", corev1.PullAlways))
	waitEvent(t, w, always, "Pulling", "Pulling image")
	e := waitEvent(t, w, always, "Pulled", "Successfully pulled image")
	t.Logf("Always pull of a cached image: %s", e.Message)
}

func nodeHasImage(n *corev1.Node, imageID, tag string, minSize int64) bool {
	for _, img := range n.Status.Images {
		if slices.Contains(img.Names, imageID) && slices.Contains(img.Names, tag) && img.SizeBytes >= minSize {
			return strings.Contains(img.Names[0], "@sha256:")
		}
	}
	return false
}
