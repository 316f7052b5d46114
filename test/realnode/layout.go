package realnode

import "fmt"

// MaxSlots is how many pools can run on one machine at once (each test
// binary that runs real nodes holds one slot).
const MaxSlots = 16

// MaxNodes is the most nodes one pool can have.
const MaxNodes = 200

// layout names and numbers what a pool in one slot creates: names carry a
// fixed prefix and the slot, address ranges are the slot's own.
//
//	host bridge  ipr<slot>br       10.98.<slot>.1/24
//	node i       10.98.<slot>.<10+i> on eth0 in its netns, veth ipr<slot>n<i> on the host
//	pods of i    10.<100+slot>.<i>.0/24 (the pool's cluster CIDR 10.<100+slot>.0.0/16)
//	cgroups      /inplace-r<slot>-n<i> in every hierarchy
type layout int

func (l layout) bridge() string { return fmt.Sprintf("ipr%dbr", int(l)) }

func (l layout) hostIP() string { return fmt.Sprintf("10.98.%d.1", int(l)) }

func (l layout) nodeIP(i int) string { return fmt.Sprintf("10.98.%d.%d", int(l), 10+i) }

func (l layout) podCIDR(i int) string { return fmt.Sprintf("10.%d.%d.0/24", 100+int(l), i) }

func (l layout) clusterCIDR() string { return fmt.Sprintf("10.%d.0.0/16", 100+int(l)) }

func (l layout) hostVeth(i int) string { return fmt.Sprintf("ipr%dn%d", int(l), i) }

func (l layout) cgroupRoot(i int) string { return fmt.Sprintf("/inplace-r%d-n%d", int(l), i) }

// cniNetwork names node i's CNI network; the CNI cache files carry it.
func (l layout) cniNetwork(i int) string { return fmt.Sprintf("inplace-r%d-n%d", int(l), i) }

// The cluster's Services (test/cluster's --service-cluster-ip-range).
const (
	serviceCIDR = "10.0.0.0/16"
	// DNSServiceIP is kube-dns's ClusterIP, the kubelets' clusterDNS.
	DNSServiceIP = "10.0.0.10"
	// ClusterDomain is the kubelets' clusterDomain, served by CoreDNS.
	ClusterDomain = "cluster.local"
)
