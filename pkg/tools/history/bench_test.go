package history_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/tools/history"
	"github.com/inplace-dev/inplace/pkg/tools/history/historytest"
)

// BenchmarkTrace measures tracing one upgrade out of a stream holding
// rollouts of 200 workloads of 10 pods each (about 14,000 events).
func BenchmarkTrace(b *testing.B) {
	bs := bustest.New(b, nil)
	var last historytest.Rollout
	n := 0
	for w := range 200 {
		r := historytest.Rollout{
			Push:     events.ImagePushedData{Registry: "registry.example", Repository: fmt.Sprintf("shop/w%d", w), Tag: "1.0.0", Origin: "distribution"},
			Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: fmt.Sprintf("w%d", w)},
			Start:    time.Now(), Step: time.Millisecond,
		}
		for p := range 10 {
			r.Pods = append(r.Pods, historytest.Pod{Name: fmt.Sprintf("w%d-%d", w, p), UID: fmt.Sprintf("uid-%d-%d", w, p), Node: "node-1", Wave: 1 + p/3})
		}
		evs, err := r.Events()
		if err != nil {
			b.Fatal(err)
		}
		if err := historytest.Publish(b.Context(), bs, evs); err != nil {
			b.Fatal(err)
		}
		n += len(evs)
		if w == 100 {
			last = r
		}
	}
	s, err := history.Open(b.Context(), bs.JetStream(), bs.Config().Stream)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		recs, err := history.Collect(b.Context(), s, last.UpgradeID(), time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		if t := history.Build(last.UpgradeID(), recs); len(t.Pods) != 10 || t.Push == nil {
			b.Fatalf("trace has %d pods, push %v", len(t.Pods), t.Push)
		}
	}
	b.ReportMetric(float64(n), "events")
}
