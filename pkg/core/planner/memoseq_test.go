package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// memoWorld is a workload's pods as a cache shows them over time: every
// change of a pod's content gives it a new resourceVersion.
type memoWorld struct {
	rng  *rand.Rand
	rv   int
	next int
	pods []*corev1.Pod
}

var memoImages = []string{"registry.example/shop/web:1.2.0", "registry.example/shop/web:1.3.0",
	"registry.example/shop/web:2.0.0", "registry.example/shop/other:1.2.0"}

// pod is a new object of pod name at the next resourceVersion, with a
// random image, readiness and node.
func (w *memoWorld) pod(name string) *corev1.Pod {
	w.rv++
	p := memoPodAt(name, strconv.Itoa(w.rv), memoImages[w.rng.IntN(len(memoImages))])
	p.Spec.NodeName = fmt.Sprintf("node-%d", w.rng.IntN(3))
	if w.rng.IntN(2) == 0 {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return p
}

// step changes the workload as a rollout's outcomes find it: a pod
// updated (most often), added, or gone.
func (w *memoWorld) step() {
	switch n := w.rng.IntN(10); {
	case n < 7 && len(w.pods) > 0:
		i := w.rng.IntN(len(w.pods))
		w.pods[i] = w.pod(w.pods[i].Name)
	case n < 9 || len(w.pods) == 0:
		w.next++
		w.pods = append(w.pods, w.pod(fmt.Sprintf("web-%d", w.next)))
	default:
		i := w.rng.IntN(len(w.pods))
		w.pods = append(w.pods[:i:i], w.pods[i+1:]...)
	}
}

// Over sequences of changes (pods updated, added, deleted, a new rollout,
// a new policy), the memo's in-place update gives what planning every pod
// again gives.
func TestMemoMatchesAFullReplanOverSequences(t *testing.T) {
	push := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "1.3.0"}}
	pols := map[string]policy.Policy{}
	for _, raw := range []string{"semver:minor", "semver:major"} {
		p, err := policy.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		pols[raw] = p
	}
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			w := &memoWorld{rng: rand.New(rand.NewPCG(seed, 1))}
			for range 5 {
				w.step()
			}
			var m Memo
			upgradeID, pol := "u-1", "semver:minor"
			var earlier, asGiven []rollout.Candidate // a result, and a copy of it as it was given
			for i := range 200 {
				switch w.rng.IntN(40) {
				case 0:
					upgradeID = fmt.Sprintf("u-%d", i)
				case 1:
					pol = map[string]string{"semver:minor": "semver:major", "semver:major": "semver:minor"}[pol]
				default:
					w.step()
				}
				got := m.Candidates("Deployment/shop/web", upgradeID, "Deployment", w.pods, push, pols[pol])
				want := Candidates("Deployment", w.pods, push, pols[pol])
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("step %d: memo vs full plan (-want +got):\n%s", i, d)
				}
				if d := cmp.Diff(asGiven, earlier); d != "" {
					t.Fatalf("step %d: an earlier observation's result changed since it was given (-given +now):\n%s", i, d)
				}
				if i%3 == 0 {
					earlier, asGiven = got, slices.Clone(got)
				}
				if n := len(m.by["Deployment/shop/web"].pods); n != len(w.pods) {
					t.Fatalf("step %d: the memo keeps %d pods; want %d", i, n, len(w.pods))
				}
			}
		})
	}
}
