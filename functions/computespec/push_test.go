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
)

// A push matching the policy plans exactly the opted-in pods that use the
// repository, with the right containers; others are left alone.
func TestPushPlansOptedInPodsOfTheRepository(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.image("web", "1.2.0")
	other, _ := e.image("other", "7.0.0")
	_, d13 := e.image("web", "1.3.0")
	e.create(spec{name: "web", replicas: 3, minReady: 4, containers: []corev1.Container{container("app", web12)},
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}})
	e.create(spec{name: "plain", replicas: 2, containers: []corev1.Container{container("app", web12)}})
	e.create(spec{name: "unrelated", replicas: 1, containers: []corev1.Container{container("app", other)},
		annotations: map[string]string{"inplace.dev/policy": "force"}})
	e.create(spec{name: "multi", replicas: 1,
		init:        []corev1.Container{container("migrate", web12)},
		containers:  []corev1.Container{container("app", web12), container("side", other)},
		annotations: map[string]string{"inplace.dev/policy": "semver:patch", "inplace.dev/grace-seconds": "4"}})

	outs := e.handle(e.pushed("push-1", "web", "1.3.0", d13))
	got := plans(t, outs)
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
	if e.state("Deployment", "plain") != nil || e.state("Deployment", "unrelated") != nil || e.state("Deployment", "multi") != nil {
		t.Error("a rollout was recorded for a workload that should be left alone")
	}
	if r := e.state("Deployment", "web"); r == nil || len(r.Pods) != 3 {
		t.Errorf("web rollout state = %+v", r)
	}
}

// Multi-container pods update only the containers using the pushed
// repository; a sidecar is updated; a plain init container is not.
func TestMultiContainerPodUpdatesOnlyItsRepository(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.image("web", "1.2.0")
	other, _ := e.image("other", "7.0.0")
	_, d := e.image("web", "1.2.1")
	always := corev1.ContainerRestartPolicyAlways
	sidecar := container("proxy", web12)
	sidecar.RestartPolicy = &always
	e.create(spec{name: "multi", replicas: 1,
		init:        []corev1.Container{container("migrate", web12), sidecar},
		containers:  []corev1.Container{container("app", web12), container("side", other)},
		annotations: map[string]string{"inplace.dev/policy": "semver:patch"}})
	got := plans(t, e.handle(e.pushed("push-m", "web", "1.2.1", d)))
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
	web12, d12 := e.image("web", "1.2.0")
	e.create(spec{name: "web", replicas: 2, containers: []corev1.Container{container("app", web12)},
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	_, d11 := e.image("web", "1.1.0")
	_, d20 := e.image("web", "2.0.0")
	_, dl := e.image("web", "latest")
	_, dx := e.image("else", "1.3.0")
	same, err := e.w.Registry.Tag(t.Context(), e.ns+"/web", "1.2.0", "1.2.5")
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
			outs := e.handle(e.pushed("none-"+string(rune('a'+i)), tt.repo, tt.tag, tt.digest))
			if len(outs) != 0 {
				t.Errorf("planned %d events: %v", len(outs), plans(t, outs))
			}
		})
	}
	if same != d12 {
		t.Fatalf("retag changed the digest: %s vs %s", same, d12)
	}
	if r := e.state("Deployment", "web"); r != nil {
		t.Errorf("a rollout was recorded: %+v", r)
	}
}

// The dry run answers with the same logic and writes nothing.
func TestDryRunShowsWavesAndReasons(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.image("web", "1.2.0")
	_, d13 := e.image("web", "1.3.0")
	e.create(spec{name: "web", replicas: 5, containers: []corev1.Container{container("app", web12)},
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}})
	e.create(spec{name: "plain", replicas: 1, containers: []corev1.Container{container("app", web12)}})
	e.create(spec{name: "strict", replicas: 1, containers: []corev1.Container{container("app", web12)},
		annotations: map[string]string{"inplace.dev/policy": "semver:patch"}})
	push := events.ImagePushedData{Registry: e.w.Registry.Host(), Repository: e.ns + "/web", Tag: "1.3.0", Digest: d13, Origin: "test"}
	got, err := computespec.DryRun(e.cache, config.StandardDefaults(), events.UpgradeRequestData{ImagePushedData: push})
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
	if e.state("Deployment", "web") != nil {
		t.Error("the dry run wrote rollout state")
	}
}
