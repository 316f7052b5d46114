package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/core/pulls"
	"github.com/inplace-dev/inplace/test/registry"
)

// baseRepo holds the benchmark's images, pushed once (random layers of the
// profile's size); each run copies them into a repository of its own by
// mounting their layers, so that the nodes see a new image per run and a
// push to one run's repository concerns no other workload.
const baseRepo = "inplace-bench/base"

// versions are the tags a run moves through.
var versions = []string{"1.0.0", "1.1.0", "1.2.0"}

// pushBase pushes every version of the base image, sizeMB each.
func pushBase(ctx context.Context, reg *registry.Registry, sizeMB int64) error {
	var opts []registry.PushOption
	if sizeMB > 0 {
		opts = append(opts, registry.WithSizeMB(sizeMB))
	}
	for _, v := range versions {
		if _, err := reg.Push(ctx, baseRepo, v, opts...); err != nil {
			return fmt.Errorf("push the base image: %w", err)
		}
	}
	return nil
}

// cachedVersion makes the new version of a cached run in namespace ns an
// image of its own, kept in src (ns/new) until the run copies it to its
// repo (newVersion), and puts it in repo by digest alone (to warm the
// nodes with). Its own, not a copy of the base: a kubelet lists at most 5
// names of an image, and every cached run's copy of the base would be one
// image, so most runs' would never be listed.
func cachedVersion(ctx context.Context, reg *registry.Registry, ns, repo string) (src, digest string, err error) {
	src = ns + "/new"
	if _, err := reg.Variant(ctx, baseRepo, versions[1], src, versions[1], "inplace-bench/run", ns); err != nil {
		return "", "", err
	}
	digest, err = reg.Copy(ctx, src, versions[1], repo, "")
	return src, digest, err
}

// newVersion makes repo:tag, the version a run upgrades to, and returns
// its digest: a copy of src's tag (the base image's, or a run's own
// variant of it), or, when freshMB is set, a new image with freshMB MiB of
// random bytes in a layer of its own, which no node has yet.
func newVersion(ctx context.Context, reg *registry.Registry, src, repo, tag string, freshMB int64) (string, error) {
	if freshMB == 0 {
		return reg.Copy(ctx, src, tag, repo, tag)
	}
	d, err := reg.Push(ctx, repo, tag, registry.WithSizeMB(freshMB))
	if err != nil {
		return "", fmt.Errorf("push a fresh image: %w", err)
	}
	return d, nil
}

// imageRef is an image of the world's registry, by tag and digest when the
// digest is known.
func imageRef(reg *registry.Registry, repo, tag, digest string) string {
	ref := reg.Host() + "/" + repo + ":" + tag
	if digest != "" {
		ref += "@" + digest
	}
	return ref
}

// warmNodes puts image (a digest reference) on every node, as a pre-pull
// DaemonSet would: a pod per node, Running, then deleted.
func warmNodes(ctx context.Context, c kubernetes.Interface, ns, image string, nodes []string) error {
	for i, node := range nodes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("warm-%d", i), Namespace: ns,
			Labels: map[string]string{"inplace-bench": "warm"}},
			Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr(int64(0)),
				Containers: []corev1.Container{{Name: "warm", Image: image, ImagePullPolicy: corev1.PullIfNotPresent}}}}
		if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("warm %s: %w", node, err)
		}
	}
	w, err := watchPods(ctx, c, ns)
	if err != nil {
		return err
	}
	defer w.stop()
	err = w.until(ctx, 5*time.Minute, "the image on every node", func(pods []*corev1.Pod) bool {
		n := 0
		for _, p := range pods {
			if p.Labels["inplace-bench"] == "warm" && p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n == len(nodes)
	})
	if err != nil {
		return err
	}
	return c.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "inplace-bench=warm"})
}

// listLimit bounds the wait for the nodes to list a warmed image: a real
// kubelet refreshes its image list every 30s and writes node status every
// 10s.
const listLimit = 2 * time.Minute

// waitListed waits until every node's status.images lists image (a digest
// reference), as pre-pull and the scheduler read it. An image just pulled
// is on the node but not listed for up to 40s; a cluster whose nodes have
// had an image for longer lists it, and that is the cluster a cached
// scenario stands for. Measured earlier, pre-pull would start a pre-pull
// pod (a sandbox, on a real node half a second) for an image its node has.
func waitListed(ctx context.Context, c kubernetes.Interface, image string, nodes []string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	f := informers.NewSharedInformerFactory(c, 0)
	defer f.Shutdown() // after cancel: it waits for the informer to stop
	defer cancel()
	inf := f.Core().V1().Nodes().Informer()
	wake := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: poke, UpdateFunc: func(_, cur any) { poke(cur) }}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	for {
		if listedOn(inf.GetStore(), image, nodes) {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %v to list %s: %w", nodes, image, ctx.Err())
		}
	}
}

// listedOn: every node of nodes in store lists image in its status.
func listedOn(store cache.Store, image string, nodes []string) bool {
	for _, name := range nodes {
		obj, ok, err := store.GetByKey(name)
		n, _ := obj.(*corev1.Node)
		if err != nil || !ok || n == nil || !pulls.OnNode(n.Status.Images, []string{image}, false) {
			return false
		}
	}
	return true
}
