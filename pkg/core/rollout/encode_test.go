package rollout

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/events"
)

// encodesAsMarshal fails the test when e's encoding of r is not
// json.Marshal's, byte for byte.
func encodesAsMarshal(t *testing.T, e *Encoder, key string, r *Rollout, when string) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Encode(key, r)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Fatalf("%s: Encode differs from json.Marshal (-want +got):\n%s", when, d)
	}
}

// The encoding of a record is json.Marshal's, whatever its fields hold:
// every field filled, names that JSON escapes, a nil pod, no pods, a
// finished rollout, and a pod changed (a changed copy in its place, as
// edit does) after it was encoded.
func TestEncodeIsMarshalForEveryField(t *testing.T) {
	var e Encoder
	var r Rollout
	fill(reflect.ValueOf(&r).Elem(), 0)
	for i := range r.Analysis.Spec.Steps {
		c := intstr.FromString("50%") // fill's Type is none of IntOrString's
		r.Analysis.Spec.Steps[i].Canary = &c
	}
	encodesAsMarshal(t, &e, "k", &r, "every field filled")
	var name string
	for name = range r.Pods { // fill's one pod
	}
	p := r.Pods[name]
	r.Pods["<a&b>\u2028"] = deepCopy(reflect.ValueOf(p)).Interface().(*Pod)
	r.Pods["nil"] = nil
	encodesAsMarshal(t, &e, "k", &r, "escaped name, nil pod")
	p = r.edit(name)
	p.State, p.PatchedAt = "Changed", t0.Add(time.Hour)
	p.Containers = slices.Clone(p.Containers)
	p.Containers[0].ToImage = "r/web:<2>"
	encodesAsMarshal(t, &e, "k", &r, "a pod changed")
	delete(r.Pods, name)
	encodesAsMarshal(t, &e, "k", &r, "a pod gone")
	r.Pods = map[string]*Pod{}
	encodesAsMarshal(t, &e, "k", &r, "no pods")
	r.Pods = nil
	encodesAsMarshal(t, &e, "k", &r, "nil pods")
	var none *Rollout
	encodesAsMarshal(t, &e, "k", none, "nil record")
}

// Along rollouts driven at random (pods planned, their outcomes, pods
// gone and replaced, halts and resumes), each write's encoding is
// json.Marshal's.
func TestEncodeIsMarshalAlongRollouts(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2))
			w := newWorld(30, 4)
			r := Begin(nil, "u-1", wl, push, Options{Budget: 5}, t0)
			var e Encoder
			now := t0
			for step := 0; step < 300 && !r.Phase.Finished(); step++ {
				now = now.Add(time.Second)
				in := fmt.Sprint("in-", step)
				switch n := rng.IntN(20); {
				case n == 0:
					name := fmt.Sprintf("web-%02d", rng.IntN(30))
					if c := w[name]; c != nil {
						c.Pod.UID += "x" // replaced
					}
				case n == 1 && r.Phase == Halted:
					Resume(r, now)
				default:
					var flying []string
					for name, p := range r.Pods {
						if p.State == InFlight {
							flying = append(flying, name)
						}
					}
					if len(flying) > 0 {
						name := flying[rng.IntN(len(flying))]
						typ := events.UpgradeSucceeded
						if rng.IntN(15) == 0 {
							typ = events.UpgradeFailed
						}
						Record(r, typ, outcome(r, name), in, now)
					}
				}
				Plan(r, w.cands(), in, false, now)
				Settle(r, in, now)
				encodesAsMarshal(t, &e, "Deployment/shop/web", r, fmt.Sprint("step ", step))
			}
		})
	}
}

// samePod tells apart two pods that differ in any one field, so that a
// changed pod is never given its old bytes: a field added to Pod and not
// compared by samePod fails here.
func TestSamePodComparesEveryField(t *testing.T) {
	var a Pod
	fill(reflect.ValueOf(&a).Elem(), 0)
	a.Containers[0].Resources = nil // compared by address: a copy's differ (encoded again)
	if b := deepCopy(reflect.ValueOf(&a)).Interface().(*Pod); !samePod(&a, b) {
		t.Fatal("a pod and its copy differ")
	}
	typ := reflect.TypeOf(a)
	for i := range typ.NumField() {
		b := deepCopy(reflect.ValueOf(&a)).Interface().(*Pod)
		f := reflect.ValueOf(b).Elem().Field(i)
		if f.Kind() == reflect.Bool {
			f.SetBool(!f.Bool())
		} else {
			fill(f, 7) // another value than fill's at depth 0
		}
		if samePod(&a, b) {
			t.Errorf("pods that differ in %s are the same to samePod", typ.Field(i).Name)
		}
	}
}
