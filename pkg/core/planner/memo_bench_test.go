package planner

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/policy"
)

// BenchmarkMemoOutcome is one outcome's observation of a workload of n
// pods, one of which changed since the last one (the pod whose outcome
// arrived).
func BenchmarkMemoOutcome(b *testing.B) {
	pol, err := policy.Parse("semver:minor")
	if err != nil {
		b.Fatal(err)
	}
	push := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "1.3.0"}}
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			pods := make([]*corev1.Pod, n)
			for i := range pods {
				pods[i] = memoPodAt(fmt.Sprintf("web-%d", i), strconv.Itoa(i+1), "registry.example/shop/web:1.2.0")
			}
			var m Memo
			m.Candidates("Deployment/shop/web", "u-1", "Deployment", pods, push, pol)
			rv := n
			for i := 0; b.Loop(); i++ {
				rv++
				p := *pods[i%n]
				p.ResourceVersion = strconv.Itoa(rv)
				pods[i%n] = &p
				m.Candidates("Deployment/shop/web", "u-1", "Deployment", pods, push, pol)
			}
		})
	}
}
