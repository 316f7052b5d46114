package computespec_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/inputs/poll"
	"github.com/inplace-dev/inplace/test/registry"
)

// A push that carries no time is dated by its registry before the
// never-backwards check: of a digest the workload never ran, made before
// the one it rolled out, it is refused with both creation times; made
// after, it goes ahead. A digest the registry does not have cannot be
// dated, nor pulled: refused.
func TestUndatedPushIsDatedByTheRegistry(t *testing.T) {
	e := newEnv(t)
	now := time.Now().UTC().Truncate(time.Second)
	push := func(made time.Time) string {
		t.Helper()
		d, err := e.W.Registry.Push(t.Context(), e.NS+"/web", "stable", registry.WithCreated(made))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	push(now.Add(-3 * time.Hour))
	web := e.W.Registry.Host() + "/" + e.NS + "/web:stable"
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web)},
		Annotations: map[string]string{"inplace.dev/policy": "digest", "inplace.dev/max-unavailable": "1"}})
	current := push(now.Add(-time.Hour))
	older := push(now.Add(-2 * time.Hour)) // never ran here, made before current
	newer := push(now)

	log := slog.New(slog.DiscardHandler)
	d := computespec.Deps{Cache: e.Cache, Store: e.KV, Log: log, Dates: &poll.Dater{},
		Defaults: config.NewStore(config.StandardDefaults(), log)}
	ro := controller.New(controller.Deps{Cache: d.Cache, Store: d.Store, Defaults: d.Defaults, Log: log})
	fn := computespec.New(ro, d)
	if got := controllertest.Plans(t, mustHandle(t, fn, e.Pushed("push-current", "web", "stable", current))); len(got) != 1 {
		t.Fatalf("the push of the current digest planned %d pods; want its first wave", len(got))
	}

	gone := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct{ name, digest, want string }{
		{"made before", older, "created at " + now.Add(-2*time.Hour).Format(time.RFC3339)},
		{"not in the registry", gone, "no such image"},
	} {
		outs, err := fn.Handle(t.Context(), e.Pushed("push-"+tc.name, "web", "stable", tc.digest))
		if k, _ := settle.Classify(err); err == nil || k != settle.Fail || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (%s); want refused for good: %q", tc.name, err, k, tc.want)
		}
		if got := controllertest.Plans(t, outs); len(got) != 0 {
			t.Errorf("%s: planned %d pods", tc.name, len(got))
		}
	}
	mustHandle(t, fn, e.Pushed("push-newer", "web", "stable", newer))
	if r := e.State("Deployment", "web"); r.Push.Digest != newer {
		t.Errorf("an undated push made after the current one: the rollout is of %s; want %s", r.Push.Digest, newer)
	}
}

// mustHandle runs fn on in and fails the test on an error.
func mustHandle(t *testing.T, fn *computespec.Function, in cloudevents.Event) []cloudevents.Event {
	t.Helper()
	outs, err := fn.Handle(t.Context(), in)
	if err != nil {
		t.Fatalf("handle %s: %v", in.ID(), err)
	}
	return outs
}
