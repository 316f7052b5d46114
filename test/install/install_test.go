package install_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

const (
	moduleRoot = "../.."
	system     = "inplace-system"
	token      = "Bearer install-test-token"
)

// TestInstallAsDocumented installs inplace on real nodes as docs/install.md
// tells a user: make image into the registry, inplace nats credentials, a
// kustomization on config/overlays/plain-nats with the images make image
// printed, kubectl apply -k and the Secrets with the real kubectl. The
// functions and the NATS cluster then run as pods of that image; a push to
// the registry, whose webhook goes to the receiver's pod, upgrades an
// opted-in Deployment's pods in place; inplace status reads the rollout
// through kubectl port-forward svc/nats; kubectl delete -k removes it all.
func TestInstallAsDocumented(t *testing.T) {
	world.RequireReal(t)
	ctx := t.Context()
	w, err := world.Start(ctx, world.Options{Nodes: world.NodesReal, KubeletOptions: kubelet.Options{Nodes: 3},
		ClusterOptions:  cluster.Options{ServiceAccountTokens: true},
		RegistryOptions: registry.Options{Runnable: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	u := newUser(t, w)

	// 1. The image.
	out := u.run(moduleRoot, "make", "image", "REGISTRY="+w.Registry.Host()+"/inplace", "PLATFORMS=linux/amd64")
	images := kustomizeImages(out)
	if images == "" {
		t.Fatalf("make image printed no kustomize images: entries:\n%s", out)
	}
	// 2. NATS identities.
	u.run(u.dir, u.inplace, "nats", "credentials", "./creds")
	// 3. The overlay.
	writeOverlay(t, u.dir, images)
	defaultStorage(ctx, t, w)
	// 4. Apply, then the Secrets.
	u.run(u.dir, u.kubectl, "apply", "-k", "my-inplace")
	u.run(u.dir, u.kubectl, "-n", system, "create", "secret", "generic", "inplace-nats-credentials", "--from-file=./creds")
	u.run(u.dir, u.kubectl, "-n", system, "create", "secret", "generic", "nats-inplace-identities",
		"--from-env-file=./creds/identities.env")
	u.run(u.dir, u.kubectl, "-n", system, "create", "secret", "generic", "inplace-hooks", "--from-literal=registry-token="+token)
	// 5. Check it.
	waitInstalled(ctx, t, w)

	upgradeInPlace(ctx, t, w, u)

	u.run(u.dir, u.kubectl, "delete", "-k", "my-inplace", "--wait=false")
	for _, ns := range []string{system, "inplace-prepull"} {
		err := world.Eventually(ctx, 4*time.Minute, "namespace "+ns+" gone", func(ctx context.Context) (bool, error) {
			_, err := w.Client().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	if left := u.run(u.dir, u.kubectl, "get", "-k", "my-inplace", "--ignore-not-found", "-o", "name"); strings.TrimSpace(left) != "" {
		t.Errorf("kubectl delete -k left behind:\n%s", left)
	}
}

// kustomizeImages is the images: block in what make image printed, as a
// user copies it: the images: line and the indented lines under it.
func kustomizeImages(out string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(out) {
		switch {
		case strings.TrimRight(line, "\n") == "images:":
			in = true
		case in && !strings.HasPrefix(line, "  "):
			return b.String()
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// upgradeInPlace opts a Deployment in, points the registry's webhook at
// the receiver, pushes a newer tag and waits for the same pods to run it.
func upgradeInPlace(ctx context.Context, t *testing.T, w *world.World, u *user) {
	t.Helper()
	ns := w.NewNamespace(t)
	repo := ns + "/web"
	if _, err := w.Registry.Push(ctx, repo, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: w.Registry.Host() + "/" + repo + ":1.0.0"}},
			}}},
	}
	if _, err := w.Client().AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := world.WaitPods(ctx, w.Client(), ns, "app=web", 3*time.Minute, "2 Ready", world.AllReady(2))
	if err != nil {
		t.Fatal(err)
	}
	receiver := receiverURL(ctx, t, w)
	if err := w.Registry.SetNotify(registry.Notify{URL: receiver, Headers: http.Header{"Authorization": {token}},
		IgnoreActions: []string{"pull"}}); err != nil {
		t.Fatal(err)
	}
	digest, err := w.Registry.Push(ctx, repo, "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]bool{}
	for _, p := range before {
		uids[string(p.UID)] = true
	}
	_, err = world.WaitPods(ctx, w.Client(), ns, "app=web", 4*time.Minute, "the same 2 pods on 1.1.0, Ready", func(pods []corev1.Pod) bool {
		if !world.AllReady(2)(pods) {
			return false
		}
		for i := range pods {
			cs := world.ContainerStatus(&pods[i], "app")
			if !uids[string(pods[i].UID)] || cs == nil || !strings.HasSuffix(cs.ImageID, digest) || cs.RestartCount != 1 {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	u.statusCompleted(ctx, "Deployment/"+ns+"/web", "-n", ns)
}

// receiverURL is the registry webhook's address: the receiver's Service
// is not reachable from the host the test registry runs on, its pod is.
func receiverURL(ctx context.Context, t *testing.T, w *world.World) string {
	t.Helper()
	pods, err := w.Client().CoreV1().Pods(system).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=receiver"})
	if err != nil || len(pods.Items) == 0 || pods.Items[0].Status.PodIP == "" {
		t.Fatalf("receiver pod: %v (%d pods)", err, len(pods.Items))
	}
	return "http://" + pods.Items[0].Status.PodIP + ":8080/hooks/registry"
}

// waitInstalled waits for what docs/install.md's step 5 shows: every
// Deployment available, the NATS servers ready, the setup Job done.
func waitInstalled(ctx context.Context, t *testing.T, w *world.World) {
	t.Helper()
	err := world.Eventually(ctx, 8*time.Minute, "inplace installed", func(ctx context.Context) (bool, error) {
		ds, err := w.Client().AppsV1().Deployments(system).List(ctx, metav1.ListOptions{})
		if err != nil || len(ds.Items) == 0 {
			return false, err
		}
		for _, d := range ds.Items {
			if d.Status.AvailableReplicas != *d.Spec.Replicas {
				return false, fmt.Errorf("deployment %s: %d of %d available", d.Name, d.Status.AvailableReplicas, *d.Spec.Replicas)
			}
		}
		ss, err := w.Client().AppsV1().StatefulSets(system).Get(ctx, "nats", metav1.GetOptions{})
		if err != nil || ss.Status.ReadyReplicas != 3 {
			return false, fmt.Errorf("nats: %v, ready %d", err, ss.Status.ReadyReplicas)
		}
		j, err := w.Client().BatchV1().Jobs(system).Get(ctx, "inplace-nats-setup", metav1.GetOptions{})
		if err != nil || j.Status.Succeeded == 0 {
			return false, fmt.Errorf("job inplace-nats-setup: %v, not succeeded", err)
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, describe(ctx, w))
	}
}

// describe is the pods of the install and their states, for a failure.
func describe(ctx context.Context, w *world.World) string {
	pods, err := w.Client().CoreV1().Pods(system).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "%s %s node=%s", p.Name, p.Status.Phase, p.Spec.NodeName)
		for _, cs := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, " %s ready=%v restarts=%d %+v", cs.Name, cs.Ready, cs.RestartCount, cs.State)
		}
		b.WriteString("\n")
	}
	return b.String()
}
