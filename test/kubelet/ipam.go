package kubelet

import (
	"net"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// ipam hands out pod IPs from a node's /24: .2 to .254, lowest free first.
type ipam struct {
	mu    sync.Mutex
	base  net.IP
	byUID map[types.UID]byte
	used  map[byte]bool
}

func newIPAM(cidr *net.IPNet) *ipam {
	return &ipam{base: cidr.IP.To4(), byUID: map[types.UID]byte{}, used: map[byte]bool{}}
}

// allocate returns uid's IP, assigning one if it has none; "" when the
// range is exhausted.
func (a *ipam) allocate(uid types.UID) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b, ok := a.byUID[uid]; ok {
		return a.ip(b)
	}
	for b := 2; b < 255; b++ {
		if !a.used[byte(b)] {
			a.used[byte(b)], a.byUID[uid] = true, byte(b)
			return a.ip(byte(b))
		}
	}
	return ""
}

// release frees uid's IP.
func (a *ipam) release(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b, ok := a.byUID[uid]; ok {
		delete(a.used, b)
		delete(a.byUID, uid)
	}
}

func (a *ipam) ip(b byte) string {
	return net.IPv4(a.base[0], a.base[1], a.base[2], b).String()
}
