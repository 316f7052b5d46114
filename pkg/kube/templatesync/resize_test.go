package templatesync_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/resize"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/world"
)

func cpuAsk(q string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
}

// A StatefulSet's and a DaemonSet's template follow a resize of their pods
// by the steps of their image sync, each step run twice (as after a
// crash): the template asks the new CPU (its image unchanged), the strategy
// is restored, the record removed, no pod replaced, and the controller
// counts every pod updated (kubectl rollout status complete; a DaemonSet
// never counts fewer).
func TestResizeFollowsWithoutARollout(t *testing.T) {
	for _, kind := range []string{"StatefulSet", "DaemonSet"} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, kind)
			f.cpu = "100m"
			f.create(2)
			before := f.strategy()
			r := f.resizeTo("250m")
			sw := f.watchStatus()
			f.sync(r)
			if r.Sync.Result != events.TemplateSynced {
				t.Errorf("result %q (%s %s); want %s", r.Sync.Result, r.Sync.Reason, r.Sync.Note, events.TemplateSynced)
			}
			meta, tmpl := f.workload()
			want := cpuAsk("250m")
			if got := tmpl.Spec.Containers[0].Resources; !resize.Equal(&got, &want) {
				t.Errorf("template asks %s; want %s", resize.String(got), resize.String(want))
			}
			if img := tmpl.Spec.Containers[0].Image; img != f.old {
				t.Errorf("template image %s; a resize keeps %s", img, f.old)
			}
			if _, ok := meta.Annotations[inplace.SyncAnnotation]; ok {
				t.Error("the sync record was left on the workload")
			}
			if got := meta.Annotations[inplace.ChangeCauseAnnotation]; !strings.Contains(got, "inplace resize z-sync") {
				t.Errorf("change-cause %q; want the resize's", got)
			}
			if got := f.strategy(); got != before {
				t.Errorf("update strategy %s; was %s", got, before)
			}
			f.settled()
			f.checkStatusWatch(sw, kind == "DaemonSet")
			f.checkPodsKept()
		})
	}
}

// resizeTo does what patch-pod and verify do for a resize: each pod's app
// container is resized through pods/resize and the test waits until the
// kubelet reports it.
func (f *fixture) resizeTo(cpu string) *rollout.Rollout {
	f.t.Helper()
	ctx := f.t.Context()
	r := &rollout.Rollout{UpgradeID: "z-sync", Phase: rollout.Syncing, Pods: map[string]*rollout.Pod{},
		Workload: events.ObjectRef{Kind: f.kind, Namespace: f.ns, Name: f.name},
		Resize:   &rollout.Resize{RequestID: "req-1", Containers: []string{"app"}, CPU: cpu}}
	to := cpuAsk(cpu)
	for name, uid := range f.uids {
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/uid","value":%q},{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":%q}]`, uid, cpu)
		if _, err := f.c.CoreV1().Pods(f.ns).Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
			f.t.Fatal(err)
		}
		r.Pods[name] = &rollout.Pod{Name: name, UID: string(uid), State: rollout.Succeeded,
			Containers: []events.ContainerPlan{{Name: "app", FromImage: f.old, ToImage: f.old,
				Resources: &events.ResizeResources{From: cpuAsk(f.cpu), To: to}}}}
	}
	_, err := world.WaitPods(ctx, f.c, f.ns, "app="+f.name, 2*time.Minute, "all resized, not restarted", func(pods []corev1.Pod) bool {
		for _, p := range pods {
			cs := world.ContainerStatus(&p, "app")
			if !world.PodReady(&p) || cs == nil || cs.Resources == nil || !resize.Equal(cs.Resources, &to) || cs.RestartCount != 0 {
				return false
			}
		}
		return len(pods) == len(f.uids)
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) workload() (metav1.ObjectMeta, corev1.PodTemplateSpec) {
	f.t.Helper()
	ctx := f.t.Context()
	if f.kind == "StatefulSet" {
		sts, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		return sts.ObjectMeta, sts.Spec.Template
	}
	ds, err := f.c.AppsV1().DaemonSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return ds.ObjectMeta, ds.Spec.Template
}

// strategy is the StatefulSet's or DaemonSet's update strategy, as JSON.
func (f *fixture) strategy() string {
	f.t.Helper()
	ctx := f.t.Context()
	var s any
	if f.kind == "StatefulSet" {
		sts, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		s = sts.Spec.UpdateStrategy
	} else {
		ds, err := f.c.AppsV1().DaemonSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		s = ds.Spec.UpdateStrategy
	}
	b, err := json.Marshal(s)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}
