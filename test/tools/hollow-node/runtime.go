package main

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	apitest "k8s.io/cri-api/pkg/apis/testing"
)

// podLookup finds a pod bound to this node by namespace and name.
type podLookup func(namespace, name string) *v1.Pod

// containerInfo is what the runtime remembers of a created container.
type containerInfo struct {
	namespace, pod, uid, name string
}

// runtimeService is the kubelet's view of the fake CRI runtime (reached
// over its gRPC socket, as kubemark does), with what the test world needs
// on top: a pod IP per sandbox, start and stop times, containers that
// crash (an image labelled to crash) or run to completion (init
// containers; pods whose restartPolicy is not Always).
type runtimeService struct {
	internalapi.RuntimeService
	fake    *apitest.FakeRuntimeService
	images  *imageService
	pods    podLookup
	timings timings
	ips     *ipam

	mu         sync.Mutex
	containers map[string]containerInfo
	attached   map[string]bool // pod UIDs whose claimed volumes were attached
}

// RunPodSandbox takes the sandbox time (and, for the first sandbox of a pod
// that mounts a PersistentVolumeClaim, the volume attach time the real
// kubelet spends in WaitForAttachAndMount just before it) and gives the new
// sandbox an IP of its own (the fake runtime gives every pod the same one).
func (r *runtimeService) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	if err := sleep(ctx, r.sandboxTime(config.GetMetadata())); err != nil {
		return "", err
	}
	id, err := r.RuntimeService.RunPodSandbox(ctx, config, handler)
	if err != nil {
		return id, err
	}
	ip := r.ips.assign(id)
	r.fake.Lock()
	if sb := r.fake.Sandboxes[id]; sb != nil {
		sb.Network = &runtimeapi.PodSandboxNetworkStatus{Ip: ip}
	}
	r.fake.Unlock()
	return id, nil
}

// sandboxTime is Sandbox, plus VolumeAttach for the first sandbox of a pod
// (by UID) that mounts a claim.
func (r *runtimeService) sandboxTime(md *runtimeapi.PodSandboxMetadata) time.Duration {
	d := r.timings.Sandbox
	if r.timings.VolumeAttach <= 0 {
		return d
	}
	r.mu.Lock()
	first := !r.attached[md.GetUid()]
	r.attached[md.GetUid()] = true
	r.mu.Unlock()
	if !first {
		return d
	}
	if pod := r.podOf(md.GetNamespace(), md.GetName(), md.GetUid()); pod != nil && claimsVolumes(pod) {
		d += r.timings.VolumeAttach
	}
	return d
}

// claimsVolumes reports whether the pod mounts a PersistentVolumeClaim (an
// ephemeral volume is one too).
func claimsVolumes(pod *v1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}

// RemovePodSandbox frees the sandbox's IP.
func (r *runtimeService) RemovePodSandbox(ctx context.Context, id string) error {
	err := r.RuntimeService.RemovePodSandbox(ctx, id)
	if err == nil {
		r.ips.release(id)
	}
	return err
}

// CreateContainer remembers which pod the container belongs to.
func (r *runtimeService) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandbox *runtimeapi.PodSandboxConfig) (string, error) {
	id, err := r.RuntimeService.CreateContainer(ctx, sandboxID, config, sandbox)
	if err != nil {
		return id, err
	}
	md := sandbox.GetMetadata()
	r.mu.Lock()
	r.containers[id] = containerInfo{namespace: md.GetNamespace(), pod: md.GetName(), uid: md.GetUid(), name: config.GetMetadata().GetName()}
	r.mu.Unlock()
	return id, nil
}

// StartContainer takes the start time, then arranges the container's exit
// if it is one that exits.
func (r *runtimeService) StartContainer(ctx context.Context, id string) error {
	if err := sleep(ctx, r.timings.Start); err != nil {
		return err
	}
	if err := r.RuntimeService.StartContainer(ctx, id); err != nil {
		return err
	}
	r.fake.Lock()
	image := ""
	if c := r.fake.Containers[id]; c != nil {
		image = c.ImageRef
	}
	r.fake.Unlock()
	switch {
	case r.images.crashes(image):
		r.exitAfter(id, r.timings.CrashAfter, 1, "Error")
	case r.runsToCompletion(id):
		r.exitAfter(id, r.timings.Run, 0, "Completed")
	}
	return nil
}

// StopContainer takes the stop time, bounded by the grace period.
func (r *runtimeService) StopContainer(ctx context.Context, id string, timeout int64) error {
	r.fake.Lock()
	running := r.fake.Containers[id] != nil && r.fake.Containers[id].State == runtimeapi.ContainerState_CONTAINER_RUNNING
	r.fake.Unlock()
	if running {
		if err := sleep(ctx, min(r.timings.Stop, time.Duration(timeout)*time.Second)); err != nil {
			return err
		}
	}
	if err := r.RuntimeService.StopContainer(ctx, id, timeout); err != nil {
		return err
	}
	// An application that handles SIGTERM exits 0 and containerd reports
	// Completed (the fake leaves both empty).
	r.fake.Lock()
	if c := r.fake.Containers[id]; c != nil && running {
		c.ExitCode, c.Reason = 0, "Completed"
	}
	r.fake.Unlock()
	return nil
}

// RemoveContainer forgets the container.
func (r *runtimeService) RemoveContainer(ctx context.Context, id string) error {
	err := r.RuntimeService.RemoveContainer(ctx, id)
	if err == nil {
		r.mu.Lock()
		delete(r.containers, id)
		r.mu.Unlock()
	}
	return err
}

// runsToCompletion: a plain init container, or any container of a pod
// whose restartPolicy is not Always.
func (r *runtimeService) runsToCompletion(id string) bool {
	r.mu.Lock()
	info, ok := r.containers[id]
	r.mu.Unlock()
	if !ok {
		return false
	}
	pod := r.podOf(info.namespace, info.pod, info.uid)
	if pod == nil {
		return false
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == info.name {
			return c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways
		}
	}
	return pod.Spec.RestartPolicy == v1.RestartPolicyNever || pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure
}

// podOf is the pod of that name and UID, from this node's pod informer,
// which may be a moment behind the kubelet's own: it waits up to 2s.
func (r *runtimeService) podOf(namespace, name, uid string) *v1.Pod {
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pod := r.pods(namespace, name); pod != nil && string(pod.UID) == uid {
			return pod
		}
		if time.Now().After(deadline) {
			return nil
		}
	}
}

// exitAfter makes a running container exit with code after d, as its
// process would; the kubelet notices at its next relist.
func (r *runtimeService) exitAfter(id string, d time.Duration, code int32, reason string) {
	time.AfterFunc(d, func() {
		r.fake.Lock()
		defer r.fake.Unlock()
		c := r.fake.Containers[id]
		if c == nil || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			return
		}
		c.State, c.ExitCode, c.Reason, c.FinishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, code, reason, time.Now().UnixNano()
	})
}

// forgetCalls empties the fake runtime's call log now and then: it records
// every call and would grow without bound.
func forgetCalls(ctx context.Context, fake *apitest.FakeRuntimeService) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fake.Lock()
			fake.Called = nil
			fake.Unlock()
		}
	}
}

// ipam hands out pod IPs from the node's /24.
type ipam struct {
	mu   sync.Mutex
	base netip.Addr
	used map[netip.Addr]string // ip -> sandbox
	by   map[string]netip.Addr
}

func newIPAM(cidr string) (*ipam, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Bits() > 24 {
		return nil, fmt.Errorf("--pod-cidr %q: want an IPv4 prefix of /24 or wider", cidr)
	}
	return &ipam{base: p.Masked().Addr(), used: map[netip.Addr]string{}, by: map[string]netip.Addr{}}, nil
}

func (a *ipam) assign(sandbox string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.by[sandbox]; ok {
		return ip.String()
	}
	ip := a.base.Next().Next() // .2 onwards, as a CNI's host-local range does
	for ; a.used[ip] != ""; ip = ip.Next() {
	}
	a.used[ip], a.by[sandbox] = sandbox, ip
	return ip.String()
}

func (a *ipam) release(sandbox string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.by[sandbox]; ok {
		delete(a.used, ip)
		delete(a.by, sandbox)
	}
}

// Version names the runtime containerd, so that container IDs read
// containerd://… as on most clusters (the fake calls itself fakeRuntime).
func (r *runtimeService) Version(ctx context.Context, apiVersion string) (*runtimeapi.VersionResponse, error) {
	v, err := r.RuntimeService.Version(ctx, apiVersion)
	if err != nil {
		return nil, err
	}
	v.RuntimeName, v.RuntimeVersion = "containerd", "2.1.0-fake"
	return v, nil
}

// ContainerStatus reports the image as the pod spec names it, as
// containerd 2 does from the CRI's UserSpecifiedImage (the fake reports
// the resolved reference, which the kubelet would show as status.image).
func (r *runtimeService) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	resp, err := r.RuntimeService.ContainerStatus(ctx, id, verbose)
	if err == nil && resp.GetStatus().GetImage().GetUserSpecifiedImage() != "" {
		resp.Status.Image = &runtimeapi.ImageSpec{Image: resp.Status.Image.UserSpecifiedImage}
	}
	return resp, err
}

// ListContainers reports images as ContainerStatus does.
func (r *runtimeService) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	list, err := r.RuntimeService.ListContainers(ctx, filter)
	for _, c := range list {
		if c.GetImage().GetUserSpecifiedImage() != "" {
			c.Image = &runtimeapi.ImageSpec{Image: c.Image.UserSpecifiedImage}
		}
	}
	return list, err
}
