package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// memoryResult is the resident memory of one `inplace run` (every
// function, embedded NATS) watching a number of pods.
type memoryResult struct {
	Pods     int     `json:"pods"`
	RSSMiB   float64 `json:"vmRSSMiB"`
	HWMMiB   float64 `json:"vmHWMMiB"`
	AnonMiB  float64 `json:"rssAnonMiB"`  // anonymous: heap, stacks, runtime
	FileMiB  float64 `json:"rssFileMiB"`  // file-backed: the pages of files mapped (the binary)
	ShmemMiB float64 `json:"rssShmemMiB"` // shared memory
	// FilesMiB is RssFile by file mapped (the binary, libraries).
	FilesMiB     map[string]float64 `json:"rssFileByFileMiB,omitempty"`
	HeapProfile  string             `json:"heapProfile,omitempty"`
	ReadySeconds float64            `json:"readySeconds"`
	Go           *goMemory          `json:"go,omitempty"`
	GoError      string             `json:"goError,omitempty"` // why Go is missing
	Source       string             `json:"source"`
	Error        string             `json:"error,omitempty"`
}

// settle is how long the process runs after it is ready before its memory
// is read: its informers have listed everything, its first resyncs ran.
const settle = 10 * time.Second

// memoryRun brings the cluster's pods up to pods (parked ones added as
// needed) and reads a fresh process's memory once it is ready and settled.
func (p *part) memoryRun(ctx context.Context, pods int) memoryResult {
	res := memoryResult{Pods: pods, Source: "/proc/<pid>/status VmRSS, VmHWM (peak) and RssAnon/RssFile/RssShmem, " + settle.String() + " after /readyz"}
	have, err := p.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Pods = max(pods, len(have.Items))
	if err := p.park(ctx, pods-len(have.Items)); err != nil {
		res.Error = err.Error()
		return res
	}
	p.stopProject()
	start := time.Now()
	if err := p.runProject(ctx, filepath.Join(p.dir, "memory-"+strconv.Itoa(pods)), 1); err != nil {
		res.Error = err.Error()
		return res
	}
	defer p.stopProject()
	res.ReadySeconds = time.Since(start).Seconds()
	select {
	case <-ctx.Done():
		res.Error = ctx.Err().Error()
		return res
	case <-time.After(settle):
	}
	m, err := memoryOf(p.project.pids()[0])
	if err != nil {
		res.Error = err.Error()
		return res
	}
	const mib = 1 << 20
	res.RSSMiB, res.HWMMiB = float64(m.RSS)/mib, float64(m.HWM)/mib
	res.AnonMiB, res.FileMiB, res.ShmemMiB = float64(m.Anon)/mib, float64(m.File)/mib, float64(m.Shmem)/mib
	if files, err := fileRSS(p.project.pids()[0]); err == nil {
		res.FilesMiB = map[string]float64{}
		for f, n := range files {
			res.FilesMiB[filepath.Base(f)] += float64(n) / mib
		}
	}
	if g, err := scrapeGoMemory(ctx, "http://"+p.project.addrs[0]+"/metrics"); err == nil {
		res.Go = &g
	} else {
		res.GoError = err.Error()
	}
	res.HeapProfile = p.heapProfile(ctx, pods)
	return res
}

// heapProfile writes the process's heap profile (as of its last GC; the
// process serves it when the bench runs with INPLACE_PPROF=1) to
// INPLACE_BENCH_PROFILES as memory-<pods>.heap.pprof, after the memory is
// read; "" when no directory is set or the fetch failed.
func (p *part) heapProfile(ctx context.Context, pods int) string {
	dir := profilesDir()
	if dir == "" {
		return ""
	}
	path := filepath.Join(dir, fmt.Sprintf("memory-%d.heap.pprof", pods))
	if err := fetchTo(ctx, "http://"+p.project.addrs[0]+"/debug/pprof/heap", path, 30*time.Second); err != nil {
		p.log.Warn("heap profile", "pods", pods, "err", err)
		return ""
	}
	return path
}

// where says what the resident memory is: anonymous against file-backed
// pages, and the Go runtime's account of the anonymous part.
func (m memoryResult) where() string {
	s := ""
	if m.AnonMiB > 0 || m.FileMiB > 0 {
		s = fmt.Sprintf("RssAnon %.0f MiB, RssFile %.0f MiB%s (clean pages of files mapped, shared with the page cache), RssShmem %.0f MiB",
			m.AnonMiB, m.FileMiB, largestFiles(m.FilesMiB), m.ShmemMiB)
	}
	if m.Go != nil {
		if s != "" {
			s += "; "
		}
		s += m.Go.where(m.RSSMiB)
	}
	return s
}

// parkedScheduler is a scheduler nobody runs: parked pods stay where they
// are, with the status a running pod has, so that a process watching pods
// holds what it would hold for as many running ones.
const parkedScheduler = "inplace-bench-parked"

// park adds n pods that look like running pods of a Deployment.
func (p *part) park(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	const ns = "parked"
	if err := p.namespace(ctx, ns); err != nil {
		return err
	}
	items := make([]string, n)
	suffix := randomHex(4)
	for i := range items {
		items[i] = fmt.Sprintf("web-%s-%05d", suffix, i)
	}
	return parallel(ctx, items, func(ctx context.Context, name string) error {
		pod, err := p.client.CoreV1().Pods(ns).Create(ctx, parkedPod(ns, name, p.w.Registry.Host()), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("park %s: %w", name, err)
		}
		i, _ := strconv.Atoi(name[len(name)-5:])
		pod.Status = runningStatus(pod, i)
		if _, err := p.client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("park %s: status: %w", name, err)
		}
		return nil
	})
}

func parkedPod(ns, name, host string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{"app": "web", "pod-template-hash": "5d8f7c9b4"},
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}},
		Spec: corev1.PodSpec{SchedulerName: parkedScheduler, Containers: []corev1.Container{{
			Name: "app", Image: host + "/shop/web:1.4.2", ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Env:   []corev1.EnvVar{{Name: "APP_MODE", Value: "production"}, {Name: "LOG_LEVEL", Value: "info"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
		}}},
	}
}

// runningStatus is what the kubelet writes for a running, ready pod.
func runningStatus(pod *corev1.Pod, i int) corev1.PodStatus {
	now := metav1.Now()
	conds := []corev1.PodCondition{}
	for _, t := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled} {
		conds = append(conds, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	ip := fmt.Sprintf("10.250.%d.%d", (i/250)%250, i%250+2)
	c := pod.Spec.Containers[0]
	return corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conds, HostIP: "172.18.0.2",
		HostIPs: []corev1.HostIP{{IP: "172.18.0.2"}}, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now,
		QOSClass: corev1.PodQOSBurstable,
		ContainerStatuses: []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
			ImageID:     c.Image + "@sha256:" + randomHex(32),
			ContainerID: "containerd://" + randomHex(32),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// largestFiles names the files of RssFile from the largest, those of
// 1 MiB or more: " (inplace 80 MiB)".
func largestFiles(files map[string]float64) string {
	names := slices.SortedFunc(maps.Keys(files), func(a, b string) int { return cmp.Compare(files[b], files[a]) })
	var parts []string
	for _, n := range names {
		if files[n] >= 1 {
			parts = append(parts, fmt.Sprintf("%s %.0f MiB", n, files[n]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}
