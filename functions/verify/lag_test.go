package verify

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// laggingCache serves the pod as it was before the input's write; at its
// first read it takes the write in (the watch bringing it) and wakes the
// pod's key, as the informer's handler does, when catchUp.
type laggingCache struct {
	kube.Reader
	mu       sync.Mutex
	pod, now *corev1.Pod
	keys     *notify.Keys
	catchUp  bool
}

func (c *laggingCache) Pod(context.Context, string, string) (*corev1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pod.DeepCopy()
	if c.catchUp && c.pod != c.now {
		c.pod = c.now
		go c.keys.Wake(p.Namespace + "/" + p.Name)
	}
	return p, nil
}

func (c *laggingCache) Wrote(p *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pod = p
}

// A delivery whose input saw a newer pod than the cache holds (another
// replica's patch, its watcher's copy) waits for the cache to show it,
// woken by the pod's watch, instead of reading the pod from the API
// server: in the scale run with 3 replicas that read was one GET for
// almost every pod. Without the watch's word within cacheLag (here, the
// delivery's deadline) it reads the API server.
func TestACacheBehindTheInputIsWaitedFor(t *testing.T) {
	before := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u1", ResourceVersion: "5"}}
	patched := before.DeepCopy()
	patched.ResourceVersion = "7"
	for _, tt := range []struct {
		name     string
		catchUp  bool
		deadline time.Duration
		gets     int
	}{
		{"the watch brings the write", true, time.Minute, 0},
		{"the watch is silent", false, 200 * time.Millisecond, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(patched.DeepCopy())
			keys := &notify.Keys{}
			c := &laggingCache{pod: before, now: patched, keys: keys, catchUp: tt.catchUp}
			f := New(Deps{Client: client, Reader: c, Changes: keys})
			s := &step{f: f, ref: events.PodRef{Namespace: "shop", Name: "web", UID: "u1"}, seenRV: "7"}
			ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
			defer cancel()
			got, err := s.read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion != "7" {
				t.Errorf("read the pod at resourceVersion %s; want 7, what the input saw", got.ResourceVersion)
			}
			gets := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "get" {
					gets++
				}
			}
			if gets != tt.gets {
				t.Errorf("%d GETs of the pod; want %d", gets, tt.gets)
			}
		})
	}
}
