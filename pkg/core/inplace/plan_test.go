package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/policy"
)

func push(registry, repo, tag, digest string) events.UpgradeRequestData {
	return events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: registry, Repository: repo, Tag: tag,
		Digest: digest, Origin: "distribution"}}
}

// single is a pod with one container "app" on image, running runningID.
func single(image, runningID string) *corev1.Pod {
	p := webPod()
	p.Spec.InitContainers, p.Status.InitContainerStatuses = nil, nil
	p.Spec.Containers = []corev1.Container{{Name: "app", Image: image}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{running("app", image, runningID, "containerd://app-1", 0)}
	return p
}

func TestPlanPod(t *testing.T) {
	nginx := func(tag, digest string) events.UpgradeRequestData {
		return push("docker.io", "library/nginx", tag, digest)
	}
	appPlan := func(from, to string) []events.ContainerPlan {
		return []events.ContainerPlan{{Name: "app", FromImage: from, FromImageID: "docker.io/library/nginx@" + dgOld, ToImage: to, ToDigest: dgNew}}
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		push      events.UpgradeRequestData
		policy    string
		wantPlans []events.ContainerPlan
		wantSkips []Skip
	}{
		{name: "multi-container: sidecar and app planned, init skipped, other repo untouched",
			pod: webPod(), push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantPlans: webPlan().Containers,
			wantSkips: []Skip{{"init-db", SkipInitContainer}}},
		{name: "short spelling keeps its spelling",
			pod: single("nginx:1.24.0", "docker.io/library/nginx@"+dgOld), push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantPlans: appPlan("nginx:1.24.0", "nginx:1.25.1@"+dgNew)},
		{name: "index.docker.io spelling is the same repository",
			pod:  single("index.docker.io/library/nginx:1.24.0", "docker.io/library/nginx@"+dgOld),
			push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantPlans: appPlan("index.docker.io/library/nginx:1.24.0", "index.docker.io/library/nginx:1.25.1@"+dgNew)},
		{name: "library spelling without registry",
			pod:  single("library/nginx:1.24.0", "docker.io/library/nginx@"+dgOld),
			push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantPlans: appPlan("library/nginx:1.24.0", "library/nginx:1.25.1@"+dgNew)},
		{name: "pinned spec image drops its old digest",
			pod:  single("nginx:1.24.0@"+dgOld, "docker.io/library/nginx@"+dgOld),
			push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantPlans: appPlan("nginx:1.24.0@"+dgOld, "nginx:1.25.1@"+dgNew)},
		{name: "tagless image is latest for the policy",
			pod:  single("nginx", "docker.io/library/nginx@"+dgOld),
			push: nginx("latest", dgNew), policy: "digest",
			wantPlans: appPlan("nginx", "nginx:latest@"+dgNew)},
		{name: "tagless image under semver:minor is refused",
			pod:  single("nginx", "docker.io/library/nginx@"+dgOld),
			push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantSkips: []Skip{{"app", "the running tag latest is not a semantic version; policy semver:minor needs one to compare"}}},
		{name: "same digest under a new tag is already running",
			pod:  single("nginx:1.24.0", "docker.io/library/nginx@"+dgOld),
			push: nginx("1.24.1", dgOld), policy: "semver:minor",
			wantSkips: []Skip{{"app", "already running " + dgOld}}},
		{name: "spec already pinned to the push waits for the kubelet",
			pod:  single("nginx:1.25.1@"+dgNew, "docker.io/library/nginx@"+dgOld),
			push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantSkips: []Skip{{"app", "already set to " + dgNew + ", waiting for the kubelet"}}},
		{name: "policy refusal is a skip with the reason",
			pod: webPod(), push: nginx("2.0.0", dgNew), policy: "semver:minor",
			wantSkips: []Skip{{"init-db", SkipInitContainer},
				{"proxy", "2.0.0 is a new major, policy semver:minor"}, {"app", "2.0.0 is a new major, policy semver:minor"}}},
		{name: "downgrade refused under force",
			pod: single("nginx:1.24.0", "docker.io/library/nginx@"+dgOld), push: nginx("1.23.0", dgNew), policy: "force",
			wantSkips: []Skip{{"app", "1.23.0 would downgrade from 1.24.0"}}},
		{name: "other repository: nothing",
			pod: webPod(), push: push("docker.io", "library/redis", "7.2", dgNew), policy: "semver:minor",
			wantPlans: nil, wantSkips: nil},
		{name: "container without status is skipped",
			pod:  func() *corev1.Pod { p := single("nginx:1.24.0", ""); p.Status.ContainerStatuses = nil; return p }(),
			push: nginx("1.25.1", dgNew), policy: "semver:minor",
			wantSkips: []Skip{{"app", SkipNoStatus}}},
		{name: "private registry with port, tag only",
			pod:  single("localhost:5000/shop/web:v1.0.0", "localhost:5000/shop/web@"+dgOld),
			push: push("localhost:5000", "shop/web", "v1.1.0", ""), policy: "semver:minor",
			wantPlans: []events.ContainerPlan{{Name: "app", FromImage: "localhost:5000/shop/web:v1.0.0",
				FromImageID: "localhost:5000/shop/web@" + dgOld, ToImage: "localhost:5000/shop/web:v1.1.0"}}},
		{name: "re-push of the running tag without digest cannot change the spec",
			pod:  single("nginx:latest", "docker.io/library/nginx@"+dgOld),
			push: nginx("latest", ""), policy: "digest",
			wantSkips: []Skip{{"app", SkipSameReference}}},
		{name: "digest-only push under force",
			pod: single("nginx:1.24.0", "docker.io/library/nginx@"+dgOld), push: nginx("", dgNew), policy: "force",
			wantPlans: appPlan("nginx:1.24.0", "nginx@"+dgNew)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol, err := policy.Parse(tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			plans, skips := PlanPod(tt.pod, tt.push, pol)
			if diff := cmp.Diff(tt.wantPlans, plans); diff != "" {
				t.Errorf("plans (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSkips, skips); diff != "" {
				t.Errorf("skips (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanPodSelectedContainers(t *testing.T) {
	pol, _ := policy.Parse("force")
	p := push("docker.io", "library/nginx", "1.25.1", dgNew)
	p.Containers = []string{"app"}
	plans, skips := PlanPod(webPod(), p, pol)
	got := []string{}
	for _, c := range plans {
		got = append(got, c.Name)
	}
	if diff := cmp.Diff([]string{"app"}, got); diff != "" {
		t.Errorf("planned (-want +got):\n%s", diff)
	}
	if len(skips) != 0 {
		t.Errorf("skips = %v; want none (unselected containers are not mentioned)", skips)
	}
}
