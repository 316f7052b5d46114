package manifests_test

import (
	"testing"

	"github.com/inplace-dev/inplace/test/world"
)

// The dry-run and RBAC tests share one test world (a real kube-apiserver,
// kube-controller-manager and etcd, simulated nodes, a real registry).
func TestMain(m *testing.M) { world.Main(m, world.Options{}) }
