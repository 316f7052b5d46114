package controllertest

import (
	"encoding/json"
	"log/slog"
	"os"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

// Env is one test's compute-spec and rollout controller over the shared
// world, in a namespace of its own, with its own NATS.
type Env struct {
	T     *testing.T
	W     *world.World
	NS    string
	KV    *bus.KV
	Cache *kube.Cache
	// Fn is compute-spec; Ro the rollout controller it begins rollouts on.
	Fn *computespec.Function
	Ro *controller.Rollouts
}

// New returns an Env over world.Shared: the test's package must run
// world.Main from its TestMain.
func New(t *testing.T) *Env {
	t.Helper()
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	kv, err := bustest.New(t, nil).KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cache, err := kube.NewCache(w.Client(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fn, ro := NewChain(controller.Deps{Cache: cache, Store: kv, Log: log,
		Defaults: config.NewStore(config.StandardDefaults(), log)})
	return &Env{T: t, W: w, NS: ns, KV: kv, Cache: cache, Fn: fn, Ro: ro}
}

// NewChain is compute-spec with its rollout controller over d, as inplace
// run wires them; d.Cache is compute-spec's too.
func NewChain(d controller.Deps) (*computespec.Function, *controller.Rollouts) {
	ro := controller.New(d)
	c, _ := d.Cache.(computespec.Cache)
	return computespec.New(ro, computespec.Deps{Cache: c, Store: d.Store, Defaults: d.Defaults,
		Recorder: d.Recorder, Log: d.Log, Now: d.Now}), ro
}

// Image pushes repo:tag to the world's registry and returns the reference and digest.
func (e *Env) Image(repo, tag string) (string, string) {
	e.T.Helper()
	d, err := e.W.Registry.Push(e.T.Context(), e.NS+"/"+repo, tag)
	if err != nil {
		e.T.Fatal(err)
	}
	return e.W.Registry.Host() + "/" + e.NS + "/" + repo + ":" + tag, d
}

// Pushed is the image.pushed event of repo:tag@digest in the world's registry.
func (e *Env) Pushed(id, repo, tag, digest string) cloudevents.Event {
	e.T.Helper()
	d := events.ImagePushedData{Registry: e.W.Registry.Host(), Repository: e.NS + "/" + repo, Tag: tag, Digest: digest, Origin: "test"}
	ev, err := events.New(id, events.ImagePushed, events.Source("test"), d.Ref(), d)
	if err != nil {
		e.T.Fatal(err)
	}
	return ev
}

// Handle runs compute-spec on in and fails the test on an error.
func (e *Env) Handle(in cloudevents.Event) []cloudevents.Event {
	e.T.Helper()
	outs, err := e.Fn.Handle(e.T.Context(), in)
	if err != nil {
		e.T.Fatalf("handle %s: %v", in.Type(), err)
	}
	return outs
}

// Plans decodes the upgrade.planned outputs, by pod name.
func Plans(t *testing.T, outs []cloudevents.Event) map[string]events.Plan {
	t.Helper()
	got := map[string]events.Plan{}
	for _, o := range outs {
		if o.Type() != events.UpgradePlanned {
			continue
		}
		p, err := events.As[events.Plan](o)
		if err != nil {
			t.Fatal(err)
		}
		got[p.Pod.Name] = p
	}
	return got
}

// State reads a workload's rollout from the KV bucket; nil if it has none.
func (e *Env) State(kind, name string) *rollout.Rollout {
	e.T.Helper()
	raw, _, err := e.KV.Get(e.T.Context(), rollout.Key(events.ObjectRef{Kind: kind, Namespace: e.NS, Name: name}))
	if err != nil {
		e.T.Fatal(err)
	}
	if raw == nil {
		return nil
	}
	var r rollout.Rollout
	if err := json.Unmarshal(raw, &r); err != nil {
		e.T.Fatal(err)
	}
	return &r
}

// Container is a container of that name running image.
func Container(name, image string) corev1.Container {
	return corev1.Container{Name: name, Image: image}
}
