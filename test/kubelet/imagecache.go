package kubelet

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// maxNodeImages and maxNamesPerImage bound node.status.images like the
// kubelet's nodeStatusMaxImages and MaxNamesPerImageInNodeStatus.
const (
	maxNodeImages    = 50
	maxNamesPerImage = 5
)

// imageCache is one node's image store: what it has pulled (or is pulling,
// until readyAt) under which names, and when its puller is next free.
type imageCache struct {
	mu        sync.Mutex
	byDigest  map[string]*nodeImage // key: canonical repository + "@" + digest
	tags      map[string]string     // canonical repo:tag → byDigest key
	busyUntil time.Time
}

type nodeImage struct {
	id      string // <repo>@sha256:...
	size    int64
	crash   bool
	progs   []string
	tags    []string
	readyAt time.Time
}

// pullResult is a pull the node has started: its imageID, when it was
// asked for, when it completes, and how long it waited for the puller.
type pullResult struct {
	img       Image
	imageID   string
	requested time.Time
	done      time.Time
	waited    time.Duration
}

func newImageCache() *imageCache {
	return &imageCache{byDigest: map[string]*nodeImage{}, tags: map[string]string{}}
}

// canonical returns the canonical form of an image reference the way
// containerd stores it (docker.io/library/..., ":latest" when untagged) and
// its canonical repository name.
func canonical(image string) (ref, repo string, err error) {
	r, err := imageref.Parse(image)
	if err != nil {
		return "", "", fmt.Errorf("invalid image name %q: %w", image, err)
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	if r.Digest != "" {
		return r.Name() + "@" + r.Digest, r.Name(), nil
	}
	return r.String(), r.Name(), nil
}

// present reports whether image is on the node (fully pulled by now), and
// what it is.
func (c *imageCache) present(image string, now time.Time) (Image, string, bool) {
	ref, _, err := canonical(image)
	if err != nil {
		return Image{}, "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key, ok := c.tags[ref]
	if !ok {
		key = ref // a digest reference is its own key
	}
	img, ok := c.byDigest[key]
	if !ok || img.readyAt.After(now) {
		return Image{}, "", false
	}
	return Image{Digest: imageref.DigestOf(img.id), Size: img.size, Crash: img.crash, Programs: img.progs}, img.id, true
}

// pull records a pull of image, resolved to img, starting now: it costs
// t.PullFixed when the node already holds (or is fetching) the digest,
// plus size at t.PullPerMB otherwise, queued behind the node's current
// pulls when t.SerialPulls.
func (c *imageCache) pull(image string, img Image, now time.Time, t Timings) (pullResult, error) {
	ref, repo, err := canonical(image)
	if err != nil {
		return pullResult{}, err
	}
	id := repo + "@" + img.Digest
	c.mu.Lock()
	defer c.mu.Unlock()
	start := now
	if t.SerialPulls && c.busyUntil.After(start) {
		start = c.busyUntil
	}
	done := start.Add(t.PullFixed)
	existing, have := c.byDigest[id]
	if !have {
		done = done.Add(time.Duration(float64(t.PullPerMB) * float64(img.Size) / (1 << 20)))
	} else if existing.readyAt.After(done) {
		done = existing.readyAt
	}
	if t.SerialPulls {
		c.busyUntil = done
	}
	c.record(ref, id, img, done, have)
	return pullResult{img: img, imageID: id, requested: now, done: done, waited: start.Sub(now)}, nil
}

// record stores the image under id and, for a tag reference, moves the tag
// to it (as a runtime does when a tag is re-pulled).
func (c *imageCache) record(ref, id string, img Image, done time.Time, have bool) {
	ni := c.byDigest[id]
	if !have {
		ni = &nodeImage{id: id, size: img.Size, crash: img.Crash, progs: img.Programs, readyAt: done}
		c.byDigest[id] = ni
	}
	if ref == id {
		return
	}
	if old, ok := c.tags[ref]; ok && old != id {
		c.byDigest[old].tags = slices.DeleteFunc(c.byDigest[old].tags, func(t string) bool { return t == ref })
	}
	c.tags[ref] = id
	if !slices.Contains(ni.tags, ref) {
		ni.tags = append(ni.tags, ref)
	}
}

// list is node.status.images: fully pulled images, largest first, each
// named by its repo digest and then its tags.
func (c *imageCache) list(now time.Time) []corev1.ContainerImage {
	c.mu.Lock()
	defer c.mu.Unlock()
	imgs := make([]*nodeImage, 0, len(c.byDigest))
	for _, img := range c.byDigest {
		if !img.readyAt.After(now) {
			imgs = append(imgs, img)
		}
	}
	sort.Slice(imgs, func(i, j int) bool {
		if imgs[i].size != imgs[j].size {
			return imgs[i].size > imgs[j].size
		}
		return imgs[i].id < imgs[j].id
	})
	if len(imgs) > maxNodeImages {
		imgs = imgs[:maxNodeImages]
	}
	out := make([]corev1.ContainerImage, 0, len(imgs))
	for _, img := range imgs {
		tags := append([]string(nil), img.tags...)
		sort.Strings(tags)
		names := append([]string{img.id}, tags...)
		if len(names) > maxNamesPerImage {
			names = names[:maxNamesPerImage]
		}
		out = append(out, corev1.ContainerImage{Names: names, SizeBytes: img.size})
	}
	return out
}

// fail records a pull that fails (the reference does not resolve): it
// costs t.PullFixed, queued behind the node's pulls when t.SerialPulls,
// and returns when it ends.
func (c *imageCache) fail(now time.Time, t Timings) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := now
	if t.SerialPulls && c.busyUntil.After(start) {
		start = c.busyUntil
	}
	done := start.Add(t.PullFixed)
	if t.SerialPulls {
		c.busyUntil = done
	}
	return done
}
