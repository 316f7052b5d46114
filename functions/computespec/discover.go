package computespec

import (
	"fmt"
	"sort"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Discover finds the workloads a push concerns: those owning a pod with a
// container from the pushed repository, or only push.Target for a manual
// upgrade. Each comes with its opt-in read from its annotations.
func Discover(c Cache, d config.Defaults, push events.UpgradeRequestData) ([]controller.Target, error) {
	seen := map[string]kube.Workload{}
	if push.Target != nil {
		w, ok, err := c.Get(*push.Target)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", push.Target, err)
		}
		if !ok {
			return nil, fmt.Errorf("%s not found", push.Target)
		}
		seen[w.Ref.String()] = w
	} else {
		pods, err := c.PodsUsingRepository(push.Name())
		if err != nil {
			return nil, err
		}
		for _, p := range pods {
			w, ok, err := c.OwnerOf(p)
			if err != nil {
				return nil, fmt.Errorf("owner of pod %s/%s: %w", p.Namespace, p.Name, err)
			}
			if ok {
				seen[w.Ref.String()] = w
			}
		}
	}
	out := make([]controller.Target, 0, len(seen))
	for _, w := range seen {
		out = append(out, controller.TargetOf(w, d).Undoing(push))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workload.Ref.String() < out[j].Workload.Ref.String() })
	return out, nil
}
