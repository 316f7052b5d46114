package controller_test

import (
	"log/slog"
	"os"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/pulls"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

// pullEnv is an env whose compute-spec reads the nodes' pulls (nodes and
// pre-pull pods in pullNS, from its informers), as in `inplace run`.
func pullEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t)
	pullNS := e.W.NewNamespace(t)
	cache, err := kube.NewCache(e.W.Client(), 0)
	if err != nil {
		t.Fatal(err)
	}
	cache.WithNodes()
	if err := cache.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	d := config.StandardDefaults()
	d.PrepullNamespace = pullNS
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.Cache = cache
	e.Fn, e.Ro = controllertest.NewChain(controller.Deps{Cache: cache, Store: e.KV, Log: log, Pulls: cache,
		Defaults: config.NewStore(d, log)})
	return e, pullNS
}

// prepullOn starts what pre-pull's Warm starts: a pre-pull pod of images
// on node, labelled with their key.
func prepullOn(t *testing.T, w *world.World, ns, node string, images []string) *corev1.Pod {
	t.Helper()
	var cs []corev1.Container
	for i, img := range images {
		cs = append(cs, corev1.Container{Name: "pull-" + string(rune('a'+i)), Image: img, Command: []string{"/bin/true"}})
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "prepull-" + node, Namespace: ns,
		Labels: map[string]string{pulls.LabelManagedBy: pulls.ManagedBy, pulls.LabelComponent: pulls.Component,
			pulls.LabelImages: pulls.Key(images)}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: cs}}
	p, err := w.Client().CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
