package realnode

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCPUFor: the values the kubelet writes for a container's CPU, as
// measured on a real node (research/real-node.md: 300m/500m gave
// cpu.shares 307, cpu.cfs_quota_us 50000).
func TestCPUFor(t *testing.T) {
	for _, tc := range []struct {
		name         string
		request, lim int64
		unified      bool
		want         CPU
	}{
		{"v1 request and limit", 300, 500, false, CPU{Shares: 307, QuotaUs: 50000, PeriodUs: 100000}},
		{"v1 no limit", 100, 0, false, CPU{Shares: 102, QuotaUs: -1, PeriodUs: 100000}},
		{"v1 tiny request and limit", 1, 1, false, CPU{Shares: 2, QuotaUs: 1000, PeriodUs: 100000}},
		{"v2 request and limit", 300, 500, true, CPU{Weight: 12, QuotaUs: 50000, PeriodUs: 100000}},
		{"v2 one core", 1000, 0, true, CPU{Weight: 39, QuotaUs: -1, PeriodUs: 100000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, cpuFor(tc.request, tc.lim, tc.unified)); diff != "" {
				t.Errorf("cpuFor(%d, %d, %v) (-want +got):\n%s", tc.request, tc.lim, tc.unified, diff)
			}
		})
	}
}
