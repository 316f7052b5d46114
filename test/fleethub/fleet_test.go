package fleethub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// TestOnePushAtTheHubMovesTheFleet: `inplace run --fleet-hub` (a real
// process, the hub's identity on the hub's NATS) takes one push from the
// registry on its receiver, releases it to staging alone; inplace on
// staging (a member) upgrades staging's Deployment in place; its
// rollout.completed reaches the hub, whose controller then releases the
// push to both production clusters.
func TestOnePushAtTheHubMovesTheFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three control planes; skipped with -short")
	}
	ctx := t.Context()
	bin := buildInplace(t)
	f, err := world.StartFleet(ctx, world.FleetOptions{World: world.Options{KubeletOptions: kubelet.Options{Nodes: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	staging := f.Member("staging")
	s, err := stack.Start(ctx, staging.World, stack.Options{Dir: t.TempDir(), Member: staging})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)

	ns := staging.World.NewNamespace(t)
	repo := ns + "/web"
	if _, err := f.Registry.Push(ctx, repo, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	uid := deploy(t, staging.World, ns, f.Registry.Host()+"/"+repo+":1.0.0")

	policy := writeFile(t, "policy.yaml", fmt.Sprintf(`workloads: [Deployment/%s/web]
stages:
- name: staging
  clusters: [staging]
- name: prod
  clusters: [prod-eu, prod-us]
`, ns))
	dir := t.TempDir()
	token, err := stack.WriteHooks(dir, f.Registry.Host())
	if err != nil {
		t.Fatal(err)
	}
	h := startHub(t, bin, f, "--fleet-policy", policy, "--hooks-config", dir+"/hooks.yaml")
	notify(t, f.Registry, h, token)

	digest, err := f.Registry.Push(ctx, repo, "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	js := hubJS(t, f)
	var r *fleet.Record
	err = world.Eventually(ctx, 30*time.Second, "staging released", func(ctx context.Context) (bool, error) {
		r, err = record(ctx, js)
		return r != nil && !r.Released["staging"].IsZero(), err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"prod-eu", "prod-us"} {
		if n, err := released(ctx, f.Member(m)); err != nil || n != 0 {
			t.Fatalf("%s holds %d releases (%v) before staging is done; want 0", m, n, err)
		}
	}

	// staging upgrades in place.
	_, err = world.WaitPods(ctx, staging.World.Client(), ns, "app=web", 2*time.Minute, "web on 1.1.0", func(ps []corev1.Pod) bool {
		if len(ps) != 1 || string(ps[0].UID) != uid {
			return false
		}
		st := world.ContainerStatus(&ps[0], "app")
		return st != nil && st.ImageID != "" && world.PodReady(&ps[0]) && containsDigest(st.ImageID, digest)
	})
	if err != nil {
		t.Fatal(err)
	}

	// Its outcome reaches the hub, which releases production.
	err = world.Eventually(ctx, 60*time.Second, "prod released", func(ctx context.Context) (bool, error) {
		r, err = record(ctx, js)
		return r != nil && !r.Released["prod"].IsZero(), err
	})
	if err != nil {
		t.Fatalf("%v; record %+v", err, r)
	}
	if got := r.Members["staging"].Rollouts["Deployment/"+ns+"/web"].State; got != fleet.Succeeded {
		t.Errorf("staging's rollout on the hub: %q, want Succeeded", got)
	}
	for _, m := range []string{"prod-eu", "prod-us"} {
		err := world.Eventually(ctx, 20*time.Second, m+" holding its release", func(ctx context.Context) (bool, error) {
			n, err := released(ctx, f.Member(m))
			return n == 1, err
		})
		if err != nil {
			t.Error(err)
		}
	}
}

func containsDigest(imageID, digest string) bool {
	return len(digest) > 0 && len(imageID) >= len(digest) && imageID[len(imageID)-len(digest):] == digest
}

// deploy creates Deployment web (one pod, opted in with semver:minor) and
// returns its pod's UID once Ready.
func deploy(t *testing.T, w *world.World, ns, image string) string {
	t.Helper()
	labels := map[string]string{"app": "web"}
	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns,
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}}}
	if _, err := w.Client().AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ps, err := world.WaitPods(t.Context(), w.Client(), ns, "app=web", 2*time.Minute, "web Ready", world.AllReady(1))
	if err != nil {
		t.Fatal(err)
	}
	return string(ps[0].UID)
}
