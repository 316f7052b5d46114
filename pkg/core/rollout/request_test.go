package rollout

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

// kinds are the request kinds, each made for request id "x-1".
var kinds = map[string]func() Request{
	"restart": func() Request {
		return NewRestart("x-1", events.RestartRequestData{Target: wl, Containers: []string{"app"}, Reason: "config"})
	},
	"resize": func() Request {
		return NewResize("x-1", events.ResizeRequestData{Target: wl, Containers: []string{"app"}, CPU: "500m", Reason: "load"})
	},
}

// TestBeginRequest: every kind begins the same way: a redelivery returns
// the rollout as it is, an unfinished rollout makes it wait, and a finished
// one hands on its history and push.
func TestBeginRequest(t *testing.T) {
	for name, newX := range kinds {
		t.Run(name, func(t *testing.T) {
			prev := &Rollout{UpgradeID: "u-1", Workload: wl, Phase: Completed, Push: push,
				History: map[string]History{"shop/web": {Digest: "sha256:1"}}}
			r, err := BeginRequest(prev, newX(), wl, Options{Budget: 2}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if r.Request() == nil || r.Request().ID() != "x-1" || r.UpgradeID != "x-1" || r.Phase != Running {
				t.Fatalf("began %+v; want a running rollout of request x-1", r)
			}
			if diff := cmp.Diff(prev.History, r.History); diff != "" || r.Push.Tag != push.Tag {
				t.Errorf("history and push not handed on (-want +got):\n%s", diff)
			}
			if again, err := BeginRequest(r, newX(), wl, Options{}, t0.Add(1)); err != nil || again != r {
				t.Errorf("a redelivered request began %p, %v; want the rollout as it is", again, err)
			}
			busy := &Rollout{UpgradeID: "u-2", Phase: Running}
			if _, err := BeginRequest(busy, newX(), wl, Options{}, t0); !errors.Is(err, ErrBusy) {
				t.Errorf("over a running rollout: %v; want ErrBusy", err)
			}
		})
	}
}

// TestSettleRequest: a request settles only once every pod is done, then
// as its kind says; its result names how it ended.
func TestSettleRequest(t *testing.T) {
	type want struct {
		Phase  Phase
		Result string
	}
	for _, c := range []struct {
		kind  string
		state PodState
		want  want
	}{
		{"restart", Succeeded, want{Completed, events.ContainerRestartSucceeded}},
		{"restart", Failed, want{Completed, events.ContainerRestartFailed}},
		{"resize", Succeeded, want{Syncing, events.ContainerResizeSucceeded}},
		{"resize", RolledBack, want{Syncing, events.ContainerResizeFailed}},
		{"resize", Current, want{Completed, events.ContainerResizeSucceeded}},
	} {
		t.Run(c.kind+"/"+string(c.state), func(t *testing.T) {
			r, err := BeginRequest(nil, kinds[c.kind](), wl, Options{Budget: 1}, t0)
			if err != nil {
				t.Fatal(err)
			}
			r.Pods["web-0"] = &Pod{Name: "web-0", State: InFlight, UpgradeID: r.UpgradeID}
			if SettleRequest(r, nil, "in-1", t0); r.Phase != Running {
				t.Fatalf("settled with a pod in flight: %s", r.Phase)
			}
			r.Pods["web-0"].State = c.state
			SettleRequest(r, nil, "in-2", t0)
			typ, _ := r.Request().Result(r, false)
			if diff := cmp.Diff(c.want, want{r.Phase, typ}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if typ, _ := r.Request().Result(r, true); typ == events.ContainerRestartSucceeded || typ == events.ContainerResizeSucceeded {
				t.Errorf("a halted request reports %s", typ)
			}
		})
	}
}

// TestMark: each kind marks the plans of its pods, and only its own.
func TestMark(t *testing.T) {
	for name, newX := range kinds {
		var p events.Plan
		newX().Mark(&p)
		if got := [2]bool{p.Restart != nil, p.Resize != nil}; got != [2]bool{name == "restart", name == "resize"} {
			t.Errorf("%s marks restart, resize = %v", name, got)
		}
	}
}
