package inplace

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const (
	dgOld = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	dgNew = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	dgOdd = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

// webPod is a running pod with a plain init container and a sidecar on
// nginx (spelled two ways), the app on nginx and a metrics exporter on
// another repository.
func webPod() *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "uid-1", ResourceVersion: "100", Generation: 1,
			Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Name: "init-db", Image: "nginx:1.24.0"},
				{Name: "proxy", Image: "docker.io/library/nginx:1.24.0", RestartPolicy: &always, ImagePullPolicy: corev1.PullIfNotPresent},
			},
			Containers: []corev1.Container{
				{Name: "app", Image: "nginx:1.24.0", ImagePullPolicy: corev1.PullIfNotPresent},
				{Name: "metrics", Image: "prom/statsd-exporter:v0.26.0"},
			},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: ReadinessGate}},
		},
		Status: corev1.PodStatus{
			Phase:              corev1.PodRunning,
			ObservedGeneration: 1,
			InitContainerStatuses: []corev1.ContainerStatus{
				terminated("init-db", "docker.io/library/nginx@"+dgOld),
				running("proxy", "docker.io/library/nginx:1.24.0", "docker.io/library/nginx@"+dgOld, "containerd://proxy-1", 0),
			},
			ContainerStatuses: []corev1.ContainerStatus{
				running("app", "docker.io/library/nginx:1.24.0", "docker.io/library/nginx@"+dgOld, "containerd://app-1", 0),
				running("metrics", "docker.io/prom/statsd-exporter:v0.26.0", "docker.io/prom/statsd-exporter@"+dgOdd, "containerd://metrics-1", 0),
			},
		},
	}
}

func running(name, image, imageID, containerID string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: image, ImageID: imageID, ContainerID: containerID,
		RestartCount: restarts, Ready: true, Started: new(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Unix(1700000000, 0)}}}
}

func terminated(name, imageID string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "docker.io/library/nginx:1.24.0", ImageID: imageID,
		ContainerID: "containerd://" + name + "-1",
		State:       corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
}

// webPlan is the plan PlanPod makes for webPod and a push of nginx:1.25.1.
func webPlan() events.Plan {
	return events.Plan{
		UpgradeID: "up-1",
		Pod:       events.PodRef{Namespace: "shop", Name: "web-1", UID: "uid-1", Node: "node-a"},
		Owner:     events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Target:    "docker.io/library/nginx:1.25.1@" + dgNew,
		Containers: []events.ContainerPlan{
			{Name: "proxy", Sidecar: true, FromImage: "docker.io/library/nginx:1.24.0", FromImageID: "docker.io/library/nginx@" + dgOld,
				ToImage: "docker.io/library/nginx:1.25.1@" + dgNew, ToDigest: dgNew, PullPolicy: "IfNotPresent"},
			{Name: "app", FromImage: "nginx:1.24.0", FromImageID: "docker.io/library/nginx@" + dgOld,
				ToImage: "nginx:1.25.1@" + dgNew, ToDigest: dgNew, PullPolicy: "IfNotPresent"},
		},
	}
}

// apply applies a JSON patch to obj's JSON, as the API server would, and
// decodes the result into out.
func apply(t *testing.T, obj any, patch []byte, out any) error {
	t.Helper()
	doc, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("decode patch: %v\n%s", err, patch)
	}
	res, err := p.Apply(doc)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatal(err)
	}
	return nil
}

// golden compares got (JSON, indented, key order kept) with
// testdata/<name>_want.json.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var ind bytes.Buffer
	if err := json.Indent(&ind, got, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	buf := append(ind.Bytes(), '\n')
	path := filepath.Join("testdata", name+"_want.json")
	if *update {
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(buf)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
