package function

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// fake is a function whose answer is chosen by the input's subject.
type fake struct{ types []string }

func (f fake) Name() string    { return "fake" }
func (f fake) Types() []string { return f.types }

func (f fake) Handle(_ context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	s := e.Subject()
	switch {
	case s == "none":
		return nil, nil
	case strings.HasPrefix(s, "three"):
		return outputs(e, 3), nil
	case s == "permanent":
		return nil, settle.Permanentf("fake: the plan names no container")
	case s == "retry":
		return nil, errors.New("fake: the API server is unavailable")
	case s == "later":
		return nil, settle.NotYet(2500*time.Millisecond, "fake: the kubelet is still pulling")
	case s == "panic":
		panic("fake: boom")
	}
	return outputs(e, 1), nil
}

// outputs are n events derived from in, as a real function makes them.
func outputs(in cloudevents.Event, n int) []cloudevents.Event {
	var outs []cloudevents.Event
	for i := range n {
		out, err := events.Derive(in, events.RolloutCompleted, events.Source("fake"), outKey(i), in.Subject(), map[string]int{"i": i})
		if err != nil {
			panic(err)
		}
		outs = append(outs, out)
	}
	return outs
}

func outKey(i int) string { return string(rune('a' + i)) }

// outID is the id of output i of an input with id inID.
func outID(inID string, i int) string {
	return events.DeriveID(inID, events.RolloutCompleted, outKey(i))
}

// withFakes makes a Function whose Start builds fns instead of the real ones.
func withFakes(fns ...runner.Function) *Function {
	f := New()
	f.build = func(context.Context, *config.Process, *slog.Logger) (*app.App, func(), error) {
		return &app.App{Functions: fns}, func() {}, nil
	}
	return f
}

func statusOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 200
	}
	var r *cehttp.Result
	if !protocol.ResultAs(err, &r) {
		t.Fatalf("error %v carries no HTTP result", err)
	}
	return r.StatusCode
}

func TestHandleDirect(t *testing.T) {
	pushed := pushedEvent(t, "push-1", "one")
	tests := []struct {
		name  string
		f     func(t *testing.T) *Function
		in    cloudevents.Event
		want  int
		reply string
	}{
		{name: "not started is 503", f: func(*testing.T) *Function { return New() }, in: pushed, want: 503},
		{name: "a type this service does not take is 422", f: func(t *testing.T) *Function {
			f := withFakes(fake{types: []string{events.PodUpdated}})
			start(t, f, nil)
			return f
		}, in: pushed, want: 422},
		{name: "dispatched by type", f: func(t *testing.T) *Function {
			f := withFakes(fake{types: []string{events.PodUpdated}}, fake{types: []string{events.ImagePushed}})
			start(t, f, nil)
			return f
		}, in: pushed, want: 200, reply: outID("push-1", 0)},
		{name: "several outputs and no K_SINK is 503", f: func(t *testing.T) *Function {
			f := withFakes(fake{types: []string{events.ImagePushed}})
			start(t, f, nil)
			return f
		}, in: pushedEvent(t, "push-2", "three"), want: 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := tt.f(t).Handle(t.Context(), tt.in)
			if got := statusOf(t, err); got != tt.want {
				t.Fatalf("status = %d (%v), want %d", got, err, tt.want)
			}
			got := ""
			if reply != nil {
				got = reply.ID()
			}
			if diff := cmp.Diff(tt.reply, got); diff != "" {
				t.Errorf("reply id (-want +got):\n%s", diff)
			}
		})
	}
}

// start starts f with cfg and stops it when the test ends.
func start(t *testing.T, f *Function, cfg map[string]string) {
	t.Helper()
	if cfg == nil {
		cfg = map[string]string{}
	}
	if err := f.Start(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop(context.Background()) })
	if ok, _ := f.Ready(t.Context()); !ok {
		t.Fatal("not ready after Start")
	}
}

func pushedEvent(t testing.TB, id, subject string) cloudevents.Event {
	t.Helper()
	d := events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "v2", Origin: "test"}
	e, err := events.New(id, events.ImagePushed, events.Source("test"), subject, d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestProcessFrom(t *testing.T) {
	tests := []struct {
		name    string
		cfg     map[string]string
		want    []string
		wantErr string
	}{
		{name: "all four by default", cfg: map[string]string{}, want: app.KnativeFunctions},
		{name: "one", cfg: map[string]string{FunctionsKey: "verify"}, want: []string{"verify"}},
		{name: "two", cfg: map[string]string{FunctionsKey: "pre-pull,patch-pod"}, want: []string{"pre-pull", "patch-pod"}},
		{name: "unknown", cfg: map[string]string{FunctionsKey: "verfiy"}, wantErr: `"verfiy" is not one of`},
		{name: "bad number", cfg: map[string]string{"INPLACE_REPLICAS": "three"}, wantErr: "INPLACE_REPLICAS"},
		{name: "bad level", cfg: map[string]string{"INPLACE_LOG_LEVEL": "loud"}, wantErr: "--log-level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := processFrom(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Functions); diff != "" {
				t.Errorf("functions (-want +got):\n%s", diff)
			}
			if p.WatchPods {
				t.Error("the pod watcher must not run behind HTTP")
			}
		})
	}
}

func TestStartRejectsTheReceiver(t *testing.T) {
	f := New()
	err := f.Start(t.Context(), map[string]string{FunctionsKey: "receiver", "INPLACE_KUBECONFIG": "/nonexistent"})
	if err == nil || !strings.Contains(err.Error(), "cannot run behind HTTP") {
		t.Fatalf("err = %v, want the receiver refused", err)
	}
	if ok, _ := f.Ready(t.Context()); ok {
		t.Error("ready after a failed Start")
	}
}
