package controller

import (
	"testing"
	"time"
)

// The wait before a write of a record is as long as its last write took,
// or spacingPerPod for each pod it holds if that is longer (a large
// record's write costs every watcher of it more than its writer), at most
// maxSpacing.
func TestSpacingGrowsWithTheRecordsPods(t *testing.T) {
	for _, tc := range []struct {
		name string
		took time.Duration
		pods int
		want time.Duration
	}{
		{name: "nothing written yet"},
		{name: "a small record: its write's time", took: 2 * time.Millisecond, pods: 12, want: 2 * time.Millisecond},
		{name: "a thousand pods", took: 2 * time.Millisecond, pods: 1000, want: 50 * time.Millisecond},
		{name: "a slow write of a thousand pods", took: 80 * time.Millisecond, pods: 1000, want: 80 * time.Millisecond},
		{name: "ten thousand pods: the bound", took: 2 * time.Millisecond, pods: 10000, want: maxSpacing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c commits
			if tc.took != 0 || tc.pods != 0 {
				c.wrote("k", tc.took, tc.pods)
			}
			if got := c.spacing("k"); got != tc.want {
				t.Errorf("spacing = %v, want %v", got, tc.want)
			}
		})
	}
}
