package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/cmd/inplace/cli"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

// inplace runs the real inplace command with args and returns its output.
func (e *env) inplace(args ...string) (string, error) {
	e.t.Helper()
	// kubectl's discovery cache (~/.kube/cache) stays with the test world.
	e.t.Setenv("KUBECACHEDIR", filepath.Join(e.w.Cluster.Dir(), "kube-cache"))
	var out bytes.Buffer
	root := cli.NewRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(e.t.Context())
	return out.String(), err
}

func (e *env) conn() []string {
	return []string{"--kubeconfig", e.w.Cluster.Kubeconfig(), "--nats-url", e.s.NATSURL, "--nats-credentials", e.s.Credentials}
}

// `inplace upgrade` goes through the same chain and follows it to the end.
func TestUpgradeCommand(t *testing.T) {
	e := newEnv(t)
	e.push("api", "1.0.0")
	digest := e.push("api", "1.1.0") // pushed before anything runs it: no rollout
	e.deploy(workload{name: "api", replicas: 3, image: e.ref("api", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	out, err := e.inplace(append([]string{"upgrade", "deployment/api", "-n", e.ns, "--image", e.ref("api", "1.1.0"),
		"--timeout", "3m"}, e.conn()...)...)
	if err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out)
	}
	for _, want := range []string{"wave 1", "upgrade.planned", "upgrade.succeeded", "rollout.completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	e.waitAllOn("api", 3, digest, time.Minute)

	// status of the workload: its rollout, and each pod as the API server
	// has it, with where its own upgrade stands.
	out, err = e.inplace(append([]string{"status", "deploy/api", "-n", e.ns}, e.conn()...)...)
	if err != nil {
		t.Fatalf("status deploy/api: %v\n%s", err, out)
	}
	if rows := linesWith(out, "Deployment/"+e.ns+"/api", ""); len(rows) != 1 || !strings.Contains(rows[0], "Completed") {
		t.Errorf("status deploy/api shows the rollout as %q:\n%s", rows, out)
	}
	if pods := linesWith(out, "api-", " true "); len(pods) != 3 || len(linesWith(out, "api-", "Succeeded")) != 3 ||
		len(linesWith(out, "api-", "@"+digest)) != 3 {
		t.Errorf("status deploy/api shows %d ready pods; want 3, Succeeded, on %s:\n%s", len(pods), digest, out)
	}

	// A workload that did not opt in is refused before anything is published.
	e.deploy(workload{name: "plain", replicas: 1, image: e.ref("api", "1.0.0")})
	out, err = e.inplace(append([]string{"upgrade", "deployment/plain", "-n", e.ns, "--image", e.ref("api", "1.1.0")}, e.conn()...)...)
	if err == nil || !strings.Contains(err.Error(), "not opted in") {
		t.Errorf("upgrade of a workload without opt-in: err %v\n%s", err, out)
	}
}

// `inplace plan` shows waves and why workloads are skipped.
func TestPlanCommand(t *testing.T) {
	e := newEnv(t)
	e.push("api", "1.0.0")
	e.deploy(workload{name: "api", replicas: 4, image: e.ref("api", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}})
	e.deploy(workload{name: "plain", replicas: 1, image: e.ref("api", "1.0.0")})
	out, err := e.inplace("plan", "--image", e.ref("api", "1.2.0"), "--kubeconfig", e.w.Cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Deployment/" + e.ns + "/api", "max-unavailable 2 (inplace.dev/max-unavailable: 2), 2 wave(s)", "Deployment/" + e.ns + "/plain", "not opted in"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
}

// A dry-run replay shows the patch an event would make, as a diff, and
// writes nothing; replaying a finished rollout would change nothing.
func TestReplayDryRun(t *testing.T) {
	e := newEnv(t)
	e.push("api", "1.0.0")
	digest := e.push("api", "1.1.0")
	e.deploy(workload{name: "api", replicas: 2, image: e.ref("api", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	before := e.resourceVersions("api")
	var name string
	for n := range before {
		name = n
	}
	pod := e.pods("api")[name]
	plan := events.Plan{UpgradeID: "u-replaytest", Pod: events.PodRef{Namespace: e.ns, Name: name, UID: string(pod.UID), Node: pod.Node},
		Owner: events.ObjectRef{Kind: "Deployment", Namespace: e.ns, Name: "api"}, Target: e.ref("api", "1.1.0") + "@" + digest,
		Containers: []events.ContainerPlan{{Name: "app", FromImage: e.ref("api", "1.0.0"), FromImageID: pod.ImageID,
			ToImage: e.ref("api", "1.1.0") + "@" + digest, ToDigest: digest}}}
	// patch-pod writes only what a rollout record confirms: the record of
	// a rollout with this pod in flight, as compute-spec would have kept it.
	key := e.record(plan, events.ImagePushedData{Registry: e.w.Registry.Host(), Repository: e.ns + "/api", Tag: "1.1.0",
		Digest: digest, Origin: "test"})
	ev, err := events.New("recorded-1", events.ImagePrepulled, events.Source("pre-pull"), plan.Pod.String(),
		events.PrepulledData{Plan: plan, Node: pod.Node, Skipped: "present on node"})
	if err != nil {
		t.Fatal(err)
	}
	line, err := history.MarshalLine(history.Record{Event: ev})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(file, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := e.inplace(append([]string{"replay", "-f", file, "--to", "patch-pod", "--dry-run"}, e.conn()...)...)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	for _, want := range []string{"would PATCH /api/v1/namespaces/" + e.ns + "/pods/" + name, "-  - image: " + e.ref("api", "1.0.0"),
		"+  - image: " + e.ref("api", "1.1.0") + "@" + digest, "inplace.dev/state", "would emit pod.patched"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay output lacks %q:\n%s", want, out)
		}
	}
	// Anything the dry run published has been handled once the bus settles.
	e.settled(time.Minute)
	if after := e.resourceVersions("api"); after[name] != before[name] {
		t.Errorf("the dry run changed pod %s (resourceVersion %s → %s)", name, before[name], after[name])
	}
	if p := e.pods("api")[name]; p.Image != e.ref("api", "1.0.0") {
		t.Errorf("the dry run changed the image to %s", p.Image)
	}
	if err := e.s.App.KV.Delete(t.Context(), key); err != nil {
		t.Fatal(err)
	}

	// The whole recorded history of a finished rollout, replayed in a dry
	// run, would change nothing.
	e.waitEvent(events.ImagePushed, "/api:1.1.0", time.Minute)
	out, err = e.inplace(append([]string{"upgrade", "deployment/api", "-n", e.ns, "--image", e.ref("api", "1.1.0")}, e.conn()...)...)
	if err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out)
	}
	upgradeID := strings.Fields(strings.TrimPrefix(out[strings.Index(out, "upgrade u-"):], "upgrade "))[0]
	upgradeID = strings.TrimSuffix(upgradeID, ":")
	out, err = e.inplace(append([]string{"replay", "--upgrade", upgradeID, "--dry-run"}, e.conn()...)...)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if !strings.Contains(out, "nothing in the cluster would change") {
		t.Errorf("replaying a finished rollout would change something:\n%s", out)
	}
}

// record stores a rollout record with plan's pod in flight, as compute-spec
// would on planning it, and returns its key.
func (e *env) record(plan events.Plan, push events.ImagePushedData) string {
	e.t.Helper()
	r := rollout.Rollout{UpgradeID: plan.UpgradeID, Workload: plan.Owner, Push: events.UpgradeRequestData{ImagePushedData: push},
		Phase: rollout.Running,
		Pods: map[string]*rollout.Pod{plan.Pod.Name: {Name: plan.Pod.Name, UID: plan.Pod.UID, Node: plan.Pod.Node,
			State: rollout.InFlight, UpgradeID: plan.UpgradeID, Containers: plan.Containers}}}
	raw, err := json.Marshal(r)
	if err != nil {
		e.t.Fatal(err)
	}
	key := rollout.Key(plan.Owner)
	if _, err := e.s.App.KV.Update(e.t.Context(), key, func([]byte) ([]byte, error) { return raw, nil }); err != nil {
		e.t.Fatal(err)
	}
	return key
}
