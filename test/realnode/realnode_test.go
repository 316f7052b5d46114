package realnode_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/realnode"
	"github.com/inplace-dev/inplace/test/world"
)

// crashHelperEnv makes TestCrashHelper the child that starts a pool and
// waits to be killed.
const crashHelperEnv = "INPLACE_REALNODE_CRASH_HELPER"

// startWorld starts a world of one real node and runs a pod on it with an
// emptyDir volume (so the kubelet mounts one).
func startWorld(ctx context.Context, t *testing.T) *world.World {
	t.Helper()
	w, err := world.Start(ctx, world.Options{Nodes: world.NodesReal, KubeletOptions: kubelet.Options{Nodes: 1}})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "pause", Image: w.Registry.Host() + "/" + world.SandboxRepo + ":" + world.SandboxTag,
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
			}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	if _, err := w.Client().CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		w.Stop()
		t.Fatalf("create pod: %v", err)
	}
	if _, err := world.WaitPod(ctx, w.Client(), pod.Namespace, pod.Name, 2*time.Minute, "Ready", world.PodReady); err != nil {
		w.Stop()
		t.Fatal(err)
	}
	return w
}

// TestNothingLeftBehind: a world on real nodes with a running pod leaves
// the machine as it found it once stopped: mounts, links, cgroups,
// processes, nft rules, files, sysctls (when no other pool ran).
func TestNothingLeftBehind(t *testing.T) {
	world.RequireReal(t)
	ctx := t.Context()
	haveMachineAlone(t)
	before := snapshot(t)
	w := startWorld(ctx, t)
	during := snapshot(t)
	for what, same := range map[string]bool{
		"mounts":    cmp.Equal(before.Mounts, during.Mounts),
		"links":     cmp.Equal(before.Links, during.Links),
		"cgroups":   cmp.Equal(before.Cgroups, during.Cgroups),
		"processes": cmp.Equal(before.Processes, during.Processes),
		"sysctls":   cmp.Equal(before.Sysctls, during.Sysctls),
		"files":     cmp.Equal(before.Files, during.Files),
	} {
		if same {
			t.Errorf("a running pool left the %s as they were: the snapshot does not see what it may leave behind", what)
		}
	}
	if err := w.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	compare(t, before, snapshot(t))
}

// TestCrashedPoolIsRemoved: a test binary killed with a pod running on
// its real node leaves containers, shims, mounts, links, cgroups and
// sysctls behind; the next Prepare removes them all.
func TestCrashedPoolIsRemoved(t *testing.T) {
	world.RequireReal(t)
	ctx := t.Context()
	haveMachineAlone(t)
	before := snapshot(t)
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashHelper$", "-test.v", "-test.timeout=5m")
	child.Env = append(os.Environ(), crashHelperEnv+"=1", realnode.AloneEnv+"=1")
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := waitLine(out, "POOL READY ")
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("crash helper: %v", err)
	}
	_ = child.Process.Signal(syscall.SIGKILL)
	_ = child.Wait()
	// The control plane died with the child (its processes' parent-death
	// signal); its directory is left where the child said, as a crash
	// leaves it: Prepare is for the node's remains, this test removes it.
	_, dir, _ := strings.Cut(line, "POOL READY ")
	dir = strings.TrimSpace(dir)
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(dir), "inplace-cluster-") {
		t.Fatalf("crash helper: control plane directory %q: want one of %s/inplace-cluster-*", dir, os.TempDir())
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove the crashed world's directory: %v", err)
		}
	})
	if left := nodeProcesses(); len(left) <= len(before.Processes) {
		t.Errorf("after the crash, node processes %v: want the pod's containers and shims left over", left)
	}
	h, err := realnode.Prepare(ctx, nil)
	if err != nil {
		t.Fatalf("prepare after the crash: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	compare(t, before, snapshot(t))
}

// haveMachineAlone waits until no other pool runs (another package's
// test world, when go test runs packages in parallel), removes what dead
// ones left, and keeps new ones out until the test ends, so the snapshots
// see this test's pool only.
func haveMachineAlone(t *testing.T) {
	t.Helper()
	release, err := realnode.Alone(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// TestCrashHelper is the child of TestCrashedPoolIsRemoved: it starts a
// world on a real node with a pod running, says so, and waits to be
// killed.
func TestCrashHelper(t *testing.T) {
	if os.Getenv(crashHelperEnv) == "" {
		t.Skip("the child of TestCrashedPoolIsRemoved")
	}
	w := startWorld(t.Context(), t)
	fmt.Println("POOL READY", w.Cluster.Dir())
	select {}
}

// waitLine is the first line of r that holds want.
func waitLine(r interface{ Read([]byte) (int, error) }, want string) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			return sc.Text(), nil
		}
	}
	return "", fmt.Errorf("exited before printing %q: %v", want, sc.Err())
}

// compare reports what the machine has after that it had not before. The
// sysctls are compared only when no other pool was running: the last
// pool restores them.
func compare(t *testing.T, before, after machine) {
	t.Helper()
	if len(before.Pools) > 0 {
		t.Logf("other pools ran (%v): sysctls not compared", before.Pools)
		before.Sysctls, after.Sysctls = nil, nil
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("the machine after the pool differs from before (-before +after):\n%s", d)
	}
}
