package computespec_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// withFields is the image.pushed of repo:tag@digest whose data also
// carries fields (JSON names and values), as a publisher of image.pushed
// could write them.
func (e *env) withFields(id, repo, tag, digest string, fields map[string]any) cloudevents.Event {
	e.T.Helper()
	d := events.ImagePushedData{Registry: e.W.Registry.Host(), Repository: e.NS + "/" + repo, Tag: tag, Digest: digest, Origin: "distribution"}
	raw, err := json.Marshal(d)
	if err != nil {
		e.T.Fatal(err)
	}
	data := map[string]any{}
	if err := json.Unmarshal(raw, &data); err != nil {
		e.T.Fatal(err)
	}
	for k, v := range fields {
		data[k] = v
	}
	ev, err := events.New(id, events.ImagePushed, events.Source("receiver"), d.Ref(), data)
	if err != nil {
		e.T.Fatal(err)
	}
	return ev
}

// request is the upgrade.requested `inplace upgrade --allow-older` publishes.
func (e *env) request(id string, ref events.ObjectRef, repo, tag, digest string) cloudevents.Event {
	e.T.Helper()
	d := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: e.W.Registry.Host(),
		Repository: e.NS + "/" + repo, Tag: tag, Digest: digest, Origin: "manual"}, Target: &ref, AllowOlder: true}
	ev, err := events.New(id, events.UpgradeRequested, events.Source("cli"), d.Ref(), d)
	if err != nil {
		e.T.Fatal(err)
	}
	return ev
}

// An image.pushed says what a registry says: one that carries an
// operator's field (a target, containers, allowOlder, undo; in any letter
// case) is refused for good, with the field named in the error and in a
// Warning Event on the workload it names, and plans nothing. The same move
// asked for in an upgrade.requested (which only the operator's identity
// may publish) goes back.
func TestPushCarriesNoOperatorFields(t *testing.T) {
	e := newEnv(t)
	web1, d1 := e.Image("web", "stable")
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web1)},
		Annotations: map[string]string{"inplace.dev/policy": "digest", "inplace.dev/max-unavailable": "2"}})
	_, d2 := e.Image("web", "stable")
	e.Finish(e.Handle(e.Pushed("push-2", "web", "stable", d2)))
	e.moveTo(ref, web1+"@"+d2, d2)
	up := e.State("Deployment", "web").UpgradeID

	log := slog.New(slog.DiscardHandler)
	rec := record.NewFakeRecorder(100)
	d := computespec.Deps{Cache: e.Cache, Store: e.KV, Log: log, Recorder: rec,
		Defaults: config.NewStore(config.StandardDefaults(), log)}
	ro := controller.New(controller.Deps{Cache: d.Cache, Store: d.Store, Defaults: d.Defaults, Recorder: rec, Log: log})
	fn := computespec.New(ro, d)
	target := map[string]any{"kind": "Deployment", "namespace": e.NS, "name": "web"}
	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   []string
		event  bool
	}{
		{"target and allowOlder", map[string]any{"target": target, "allowOlder": true}, []string{"data.target", "data.allowOlder"}, true},
		{"an undo", map[string]any{"target": target, "allowOlder": true, "undo": up}, []string{"data.target", "data.allowOlder", "data.undo"}, true},
		{"containers", map[string]any{"target": target, "containers": []string{"app"}}, []string{"data.target", "data.containers"}, true},
		{"allowOlder alone", map[string]any{"allowOlder": true}, []string{"data.allowOlder"}, false},
		{"allowOlder false", map[string]any{"allowOlder": false}, []string{"data.allowOlder"}, false},
		{"another spelling", map[string]any{"AllowOlder": true, "TARGET": target}, []string{"data.target", "data.allowOlder"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outs, err := fn.Handle(t.Context(), e.withFields("forged-"+tc.name, "web", "stable", d1, tc.fields))
			if k, _ := settle.Classify(err); err == nil || k != settle.Fail {
				t.Fatalf("handled with %v (%s); want refused for good", err, k)
			}
			for _, f := range tc.want {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("reason %q does not name %s", err, f)
				}
			}
			if len(outs) > 0 {
				t.Errorf("%d outputs; want none", len(outs))
			}
			if r := e.State("Deployment", "web"); r.UpgradeID != up {
				t.Errorf("the record moved to upgrade %s", r.UpgradeID)
			}
			select {
			case ev := <-rec.Events:
				if !tc.event || !strings.Contains(ev, "Warning "+computespec.EventRefused) || !strings.Contains(ev, tc.want[0]) {
					t.Errorf("Event %q; want a Warning %s naming %s: %v", ev, computespec.EventRefused, tc.want[0], tc.event)
				}
			default:
				if tc.event {
					t.Error("no Event on the Deployment")
				}
			}
		})
	}

	// The operator asks for the same move, and it goes back.
	got := controllertest.Plans(t, e.Handle(e.request("asked-1", ref, "web", "stable", d1)))
	if len(got) != 2 {
		t.Fatalf("the operator's upgrade.requested planned %d pods; want both back on %s", len(got), d1)
	}
	for name, p := range got {
		if c := p.Containers[0]; c.ToDigest != d1 {
			t.Errorf("%s: planned to %s; want %s", name, c.ToImage, d1)
		}
	}
}
