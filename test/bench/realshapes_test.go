package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/test/registry"
)

// TestRealStatefulSetAndUncachedTargets: the real-node StatefulSet and
// uncached rows are judged against their goals, each with its failed
// requests, and a missed goal says where the time went.
func TestRealStatefulSetAndUncachedTargets(t *testing.T) {
	r := realSample()
	tr := &trafficCounts{Sent: 400, OK: 400}
	r.Rollouts = append(r.Rollouts,
		rollout{Scenario: "real-sts-pvc", Run: inPlace, Pods: 4, Seconds: 3, Traffic: tr},
		rollout{Scenario: "real-sts-pvc", Run: nativeSame, Pods: 4, Seconds: 15, Traffic: tr},
		rollout{Scenario: "real-sts-pvc", Run: nativeDefaults, Pods: 4, Seconds: 30, Traffic: tr},
		rollout{Scenario: "real-uncached", Run: inPlace, Pods: 4, Seconds: 12, Traffic: tr,
			Shares: map[string]float64{actorKubelet: 9, actorProject: 3}},
		rollout{Scenario: "real-uncached", Run: nativeSame, Pods: 4, Seconds: 10, Traffic: tr},
		rollout{Scenario: "real-uncached", Run: nativeDefaults, Pods: 4, Seconds: 8, Traffic: tr},
		rollout{Scenario: "real-uncached", Run: floorRun, Pods: 4, Seconds: 11, Traffic: tr})
	ts := r.targets()
	got := map[string]string{}
	for _, name := range []string{
		"Real nodes, StatefulSet with a PVC per pod, image cached: in place vs the native rolling update (same max-unavailable)",
		"Real nodes, StatefulSet with a PVC per pod, image cached: failed requests to the Service, in place",
		"Real nodes, one-container app, image not on the nodes: in place vs the native rolling update (same max-unavailable)",
		"Real nodes, one-container app, image not on the nodes: failed requests to the Service, in place",
	} {
		x := targetNamed(t, ts, name)
		got[name[len("Real nodes, "):]] = x.Want + " | " + x.Got + " → " + met(x) + " | " + x.Where
	}
	want := map[string]string{
		"StatefulSet with a PVC per pod, image cached: in place vs the native rolling update (same max-unavailable)": "≤ 0.25x | 0.20x (3.0s / 15.0s); vs native defaults 0.10x → met | ",
		"StatefulSet with a PVC per pod, image cached: failed requests to the Service, in place":                     "0 | in place 0 of 400; native, same max-unavailable 0 of 400; native, defaults 0 of 400 → met | ",
		"one-container app, image not on the nodes: in place vs the native rolling update (same max-unavailable)": "≤ 0.50x | 1.20x (12.0s / 10.0s); vs native defaults 1.50x → missed | " +
			"the goal is below the kubelet's floor: an ideal in-place controller (the kubelet alone) took 11.0s, 1.10x the native 10.0s, " +
			"against the goal of 0.50x; in place took 12.0s, +1.0s over that floor; ; by who was waited for (timeline): kubelet 9.0 s, inplace 3.0 s",
		"one-container app, image not on the nodes: failed requests to the Service, in place": "0 | in place 0 of 400; native, same max-unavailable 0 of 400; " +
			"native, defaults 0 of 400; floor (kubelet alone) 0 of 400 → met | ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
}

// TestRealScenarioChoice: -real-scenarios runs the named real-node
// scenarios only and refuses a name that is none.
func TestRealScenarioChoice(t *testing.T) {
	o, err := parseOptions([]string{"-real-scenarios", "real-sts-pvc, real-uncached"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sc := range chosenReal(o) {
		got = append(got, sc.Name)
	}
	if d := cmp.Diff([]string{"real-sts-pvc", "real-uncached"}, got); d != "" {
		t.Errorf("chosen (-want +got):\n%s", d)
	}
	if _, err := parseOptions([]string{"-real-scenarios", "sts-pvc"}); err == nil {
		t.Error("-real-scenarios sts-pvc (a simulated scenario) was accepted")
	}
}

// TestRealStatefulSet: on real nodes the StatefulSet's volumes are
// directories of their own under VolumeDir, made by the node, and its
// Service has a virtual IP for the traffic probe; on simulated nodes the
// Service stays headless.
func TestRealStatefulSet(t *testing.T) {
	sc := realScenarios(options{realPods: 2})[2]
	wl := sc.workloadFor(inPlace, "real-sts-pvc-0", "img")
	wl.Real, wl.VolumeDir = true, "/tmp/v"
	var got []string
	for _, pv := range wl.volumes() {
		hp := pv.Spec.HostPath
		got = append(got, pv.Name+" "+hp.Path+" "+string(*hp.Type)+" "+pv.Spec.ClaimRef.Name)
	}
	want := []string{
		"real-sts-pvc-0-data-app-0 " + filepath.Join("/tmp/v", "real-sts-pvc-0", "data-app-0") + " DirectoryOrCreate data-app-0",
		"real-sts-pvc-0-data-app-1 " + filepath.Join("/tmp/v", "real-sts-pvc-0", "data-app-1") + " DirectoryOrCreate data-app-1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("volumes (-want +got):\n%s", d)
	}
	if ip := wl.service().Spec.ClusterIP; ip != "" {
		t.Errorf("real StatefulSet's Service: clusterIP %q, want a virtual IP", ip)
	}
	wl.Real = false
	if ip := wl.service().Spec.ClusterIP; ip != corev1.ClusterIPNone {
		t.Errorf("simulated StatefulSet's Service: clusterIP %q, want headless", ip)
	}
}

// TestNewVersionIsFresh: with freshMB each run's new version is an image
// of its own whose layers no other push has; without, it is the base
// image's.
func TestNewVersionIsFresh(t *testing.T) {
	ctx := t.Context()
	reg, err := registry.Start(ctx, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	if err := pushBase(ctx, reg, 0); err != nil {
		t.Fatal(err)
	}
	layers := map[string]string{}
	for _, repo := range []string{"a/app", "b/app"} {
		d, err := newVersion(ctx, reg, baseRepo, repo, versions[1], 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.ParseReference(reg.Host() + "/" + repo + "@" + d)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(ref)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		var size int64
		for _, l := range ls {
			ld, _ := l.Digest()
			if other, ok := layers[ld.String()]; ok {
				t.Errorf("%s shares layer %s with %s", repo, ld, other)
			}
			layers[ld.String()] = repo
			n, _ := l.Size()
			size += n
		}
		if size < 1<<20 {
			t.Errorf("%s: %d bytes of layers, want at least 1 MiB", repo, size)
		}
	}
	base, err := reg.Copy(ctx, baseRepo, versions[1], "c/app", "x")
	if err != nil {
		t.Fatal(err)
	}
	d, err := newVersion(ctx, reg, baseRepo, "d/app", versions[1], 0)
	if err != nil || d != base {
		t.Errorf("without freshMB: %s, %v; want the base image %s", d, err, base)
	}
}

// TestCachedVersionsAreImagesOfTheirOwn: each cached run's new version is
// an image of its own, the one its run then tags (a kubelet lists at most
// 5 names of one image).
func TestCachedVersionsAreImagesOfTheirOwn(t *testing.T) {
	ctx := t.Context()
	reg, err := registry.Start(ctx, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	if err := pushBase(ctx, reg, 0); err != nil {
		t.Fatal(err)
	}
	base, err := reg.Copy(ctx, baseRepo, versions[1], "c/app", "x")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{base: baseRepo}
	for _, ns := range []string{"a", "b"} {
		src, warmed, err := cachedVersion(ctx, reg, ns, ns+"/app")
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[warmed]; ok {
			t.Errorf("%s's new version %s is %s's", ns, warmed, other)
		}
		seen[warmed] = ns
		if d, err := newVersion(ctx, reg, src, ns+"/app", versions[1], 0); err != nil || d != warmed {
			t.Errorf("%s tagged %s: %s, %v; want the warmed %s", ns, versions[1], d, err, warmed)
		}
	}
}

func TestScaleRoundsFlag(t *testing.T) {
	o, err := parseOptions([]string{"-scale-rounds", "2"})
	if err != nil || o.scaleRounds != 2 {
		t.Fatalf("-scale-rounds 2: %d, %v", o.scaleRounds, err)
	}
	if o, err := parseOptions(nil); err != nil || o.scaleRounds != 3 {
		t.Fatalf("the default rounds: %d, %v; want 3", o.scaleRounds, err)
	}
	if _, err := parseOptions([]string{"-scale-rounds", "0"}); err == nil || !strings.Contains(err.Error(), "-scale-rounds") {
		t.Fatalf("-scale-rounds 0: %v; want an error naming the flag", err)
	}
}
