package computespec_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
)

// A push matching the policy plans exactly the opted-in pods that use the
// repository, with the right containers; others are left alone.
func TestPushPlansOptedInPodsOfTheRepository(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	other, _ := e.Image("other", "7.0.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 3, MinReady: 4, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	e.Create(controllertest.Spec{Name: "plain", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)}})
	e.Create(controllertest.Spec{Name: "unrelated", Replicas: 1, Containers: []corev1.Container{controllertest.Container("app", other)},
		Annotations: map[string]string{"inplace.dev/policy": "force"}})
	e.Create(controllertest.Spec{Name: "multi", Replicas: 1,
		Init:        []corev1.Container{controllertest.Container("migrate", web12)},
		Containers:  []corev1.Container{controllertest.Container("app", web12), controllertest.Container("side", other)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:patch", "inplace.dev/grace-seconds": "4"}})

	outs := e.Handle(e.Pushed("push-1", "web", "1.3.0", d13))
	got := controllertest.Plans(t, outs)
	owners := map[string]int{}
	for _, p := range got {
		owners[p.Owner.Kind+"/"+p.Owner.Name]++
	}
	// semver:patch refuses 1.2.0 → 1.3.0 for multi; web takes all three pods (100%).
	if diff := cmp.Diff(map[string]int{"Deployment/web": 3}, owners); diff != "" {
		t.Fatalf("planned owners (-want +got):\n%s", diff)
	}
	for name, p := range got {
		want := []events.ContainerPlan{{Name: "app", FromImage: web12, ToImage: strings.TrimSuffix(web12, "1.2.0") + "1.3.0@" + d13,
			ToDigest: d13, PullPolicy: "IfNotPresent"}}
		p.Containers[0].FromImageID = ""
		if diff := cmp.Diff(want, p.Containers); diff != "" {
			t.Errorf("%s containers (-want +got):\n%s", name, diff)
		}
		if p.UpgradeID == "" || p.Pod.UID == "" || p.Pod.Node == "" || p.Wave != 1 || !p.Prepull || p.MinReadySeconds != 4 {
			t.Errorf("%s plan incomplete: %+v", name, p)
		}
	}
	if e.State("Deployment", "plain") != nil || e.State("Deployment", "unrelated") != nil || e.State("Deployment", "multi") != nil {
		t.Error("a rollout was recorded for a workload that should be left alone")
	}
	if r := e.State("Deployment", "web"); r == nil || len(r.Pods) != 3 {
		t.Errorf("web rollout state = %+v", r)
	}
}

// Multi-container pods update only the containers using the pushed
// repository; a sidecar is updated; a plain init container is not.
func TestMultiContainerPodUpdatesOnlyItsRepository(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	other, _ := e.Image("other", "7.0.0")
	_, d := e.Image("web", "1.2.1")
	always := corev1.ContainerRestartPolicyAlways
	sidecar := controllertest.Container("proxy", web12)
	sidecar.RestartPolicy = &always
	e.Create(controllertest.Spec{Name: "multi", Replicas: 1,
		Init:        []corev1.Container{controllertest.Container("migrate", web12), sidecar},
		Containers:  []corev1.Container{controllertest.Container("app", web12), controllertest.Container("side", other)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:patch"}})
	got := controllertest.Plans(t, e.Handle(e.Pushed("push-m", "web", "1.2.1", d)))
	if len(got) != 1 {
		t.Fatalf("planned %d pods; want 1", len(got))
	}
	for _, p := range got {
		var names []string
		for _, c := range p.Containers {
			names = append(names, c.Name)
		}
		sort.Strings(names)
		if diff := cmp.Diff([]string{"app", "proxy"}, names); diff != "" {
			t.Errorf("planned containers (-want +got):\n%s", diff)
		}
		if c := p.Container("proxy"); c == nil || !c.Sidecar {
			t.Errorf("proxy not planned as a sidecar: %+v", c)
		}
	}
}

// Non-matching tags, downgrades, other repositories and pushes of the digest
// already running plan nothing.
func TestPushesThatPlanNothing(t *testing.T) {
	e := newEnv(t)
	web12, d12 := e.Image("web", "1.2.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	_, d11 := e.Image("web", "1.1.0")
	_, d20 := e.Image("web", "2.0.0")
	_, dl := e.Image("web", "latest")
	_, dx := e.Image("else", "1.3.0")
	same, err := e.W.Registry.Tag(t.Context(), e.NS+"/web", "1.2.0", "1.2.5")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, repo, tag, digest string
	}{
		{"downgrade", "web", "1.1.0", d11},
		{"new major under semver:minor", "web", "2.0.0", d20},
		{"not a version", "web", "latest", dl},
		{"another repository", "else", "1.3.0", dx},
		{"same digest under a new tag", "web", "1.2.5", same},
		{"the running digest", "web", "1.2.0", d12},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := e.Handle(e.Pushed("none-"+string(rune('a'+i)), tt.repo, tt.tag, tt.digest))
			if len(outs) != 0 {
				t.Errorf("planned %d events: %v", len(outs), controllertest.Plans(t, outs))
			}
		})
	}
	if same != d12 {
		t.Fatalf("retag changed the digest: %s vs %s", same, d12)
	}
	if r := e.State("Deployment", "web"); r != nil {
		t.Errorf("a rollout was recorded: %+v", r)
	}
}

// The dry run answers with the same logic and writes nothing.
func TestDryRunShowsWavesAndReasons(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 5, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}})
	e.Create(controllertest.Spec{Name: "plain", Replicas: 1, Containers: []corev1.Container{controllertest.Container("app", web12)}})
	e.Create(controllertest.Spec{Name: "strict", Replicas: 1, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:patch"}})
	push := events.ImagePushedData{Registry: e.W.Registry.Host(), Repository: e.NS + "/web", Tag: "1.3.0", Digest: d13, Origin: "test"}
	got, err := computespec.DryRun(e.Cache, config.StandardDefaults(), events.UpgradeRequestData{ImagePushedData: push})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]computespec.WorkloadPlan{}
	for _, wp := range got {
		byName[wp.Workload.Name] = wp
	}
	web := byName["web"]
	var sizes []int
	for _, w := range web.Waves {
		sizes = append(sizes, len(w))
	}
	if diff := cmp.Diff([]int{2, 2, 1}, sizes); diff != "" || web.Skip != "" || web.Budget != 2 {
		t.Errorf("web: waves %v (-want +got):\n%s skip %q budget %d", sizes, diff, web.Skip, web.Budget)
	}
	if s := byName["plain"].Skip; !strings.Contains(s, "not opted in") {
		t.Errorf("plain skip = %q", s)
	}
	strict := byName["strict"]
	if strict.Skip == "" || len(strict.Current) != 1 || !strings.Contains(strict.Current[0].Reason, "semver:patch") {
		t.Errorf("strict: skip %q current %+v", strict.Skip, strict.Current)
	}
	if e.State("Deployment", "web") != nil {
		t.Error("the dry run wrote rollout state")
	}
}
