package kubelet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

// PoolLabel labels the nodes of one Kubelet with its NamePrefix.
const PoolLabel = "kubelet.inplace.dev/pool"

// KubeletVersion is what the simulated nodes report, the version of the
// control plane the test world runs.
const KubeletVersion = "v1.35.4"

// node is one simulated node: its addresses, pod IPs, image store and
// event recorder. It is the host its pods' containers run on.
type node struct {
	name    string
	ip      string
	cidr    *net.IPNet
	ipam    *ipam
	cache   *imageCache
	events  record.EventBroadcaster
	rec     record.EventRecorder
	res     ImageResolver
	timeout time.Duration

	capacity corev1.ResourceList

	mu     sync.Mutex
	listed []corev1.ContainerImage // the image list as last refreshed
}

// host is what a pod worker needs from its node.
type host interface {
	resolve(ctx context.Context, ref string) (Image, error)
	images() *imageCache
	record(ref *corev1.ObjectReference, eventtype, reason, message string)
	newContainerID() string
	hostIP() string
	podIP(pod *corev1.Pod) string
	// allocatable is the node's allocatable CPU and memory (a resize
	// asking more for one pod is Infeasible).
	allocatable() corev1.ResourceList
}

var _ host = (*node)(nil)

func (n *node) images() *imageCache { return n.cache }

func (n *node) hostIP() string { return n.ip }

func (n *node) allocatable() corev1.ResourceList { return n.capacity }

// podIP is a new sandbox's IP: the node's for a host-network pod.
func (n *node) podIP(pod *corev1.Pod) string {
	if pod.Spec.HostNetwork {
		return n.ip
	}
	return n.ipam.allocate(pod.UID)
}

// resolve is the registry round trip of a pull, bounded in time.
func (n *node) resolve(ctx context.Context, ref string) (Image, error) {
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	return n.res.Resolve(ctx, ref)
}

func (n *node) record(ref *corev1.ObjectReference, eventtype, reason, message string) {
	n.rec.Event(ref, eventtype, reason, message)
}

func (n *node) newContainerID() string { return "containerd://" + randomHex(32) }

// newNode lays out node i of a pool: pod CIDR <a>.<b>.<i>.0/24 of the
// pool's /16, InternalIP 172.18.<b>.<i+2>.
func newNode(name string, i int, podCIDR string) (*node, error) {
	_, base, err := net.ParseCIDR(podCIDR)
	if err != nil {
		return nil, fmt.Errorf("pod CIDR %q: %w", podCIDR, err)
	}
	b := base.IP.To4()
	if b == nil || i > 255 {
		return nil, fmt.Errorf("pod CIDR %q: need an IPv4 /16 and at most 256 nodes", podCIDR)
	}
	cidr := &net.IPNet{IP: net.IPv4(b[0], b[1], byte(i), 0).To4(), Mask: net.CIDRMask(24, 32)}
	return &node{
		name:  name,
		ip:    net.IPv4(172, 18, b[1], byte(i+2)).String(),
		cidr:  cidr,
		ipam:  newIPAM(cidr),
		cache: newImageCache(),
	}, nil
}

// object is the Node as first registered.
func (n *node) object(o Options, now time.Time) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": n.name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		PoolLabel:                o.NamePrefix,
	}
	for k, v := range o.NodeLabels {
		labels[k] = v
	}
	capacity := corev1.ResourceList{}
	for k, v := range o.Capacity {
		capacity[corev1.ResourceName(k)] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels},
		Spec:       corev1.NodeSpec{PodCIDR: n.cidr.String(), PodCIDRs: []string{n.cidr.String()}},
		Status: corev1.NodeStatus{
			Capacity:        capacity,
			Allocatable:     capacity.DeepCopy(),
			Phase:           corev1.NodeRunning,
			Conditions:      nodeConditions(nil, now),
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.ip}, {Type: corev1.NodeHostName, Address: n.name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: randomHex(16), SystemUUID: randomHex(16), BootID: randomHex(16),
				KernelVersion: "6.8.0-inplace", OSImage: "inplace simulated node",
				ContainerRuntimeVersion: "containerd://2.1.0", KubeletVersion: KubeletVersion,
				OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
}

// nodeConditions are the kubelet's node conditions, healthy, heartbeat
// now; a condition's transition time is kept while its status stays.
func nodeConditions(old []corev1.NodeCondition, now time.Time) []corev1.NodeCondition {
	t := metav1.NewTime(now.Truncate(time.Second))
	own := []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
	}
	out := make([]corev1.NodeCondition, 0, len(old)+len(own))
	for _, c := range old {
		if !isOwnNodeCondition(c.Type) {
			out = append(out, c)
		}
	}
	for _, c := range own {
		c.LastHeartbeatTime, c.LastTransitionTime = t, t
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	return out
}

func isOwnNodeCondition(t corev1.NodeConditionType) bool {
	switch t {
	case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady:
		return true
	}
	return false
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// refreshImages takes the node's image list from its store as of now and
// reports whether it changed.
func (n *node) refreshImages(now time.Time) bool {
	l := n.cache.list(now)
	n.mu.Lock()
	defer n.mu.Unlock()
	if equality.Semantic.DeepEqual(l, n.listed) {
		return false
	}
	n.listed = l
	return true
}

// listedImages is node.status.images: the list as last refreshed.
func (n *node) listedImages() []corev1.ContainerImage {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]corev1.ContainerImage(nil), n.listed...)
}
