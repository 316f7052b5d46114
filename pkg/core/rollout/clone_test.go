package rollout

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

// fill sets every exported field reachable from v (a settable value) to
// something that is not its zero value: one entry in each map and slice,
// a value behind each pointer.
func fill(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprint("s", depth))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(depth + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(depth + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		n := reflect.New(v.Type().Elem())
		fill(n.Elem(), depth+1)
		v.Set(n)
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(t0.Add(time.Duration(depth) * time.Minute)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// shared lists the pointers, maps and slices that a and b (equal values)
// share, by path.
func shared(a, b reflect.Value, path string) []string {
	switch a.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if a.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
	}
	var out []string
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		out = shared(a.Elem(), b.Elem(), path)
	case reflect.Map:
		for it := a.MapRange(); it.Next(); {
			out = append(out, shared(it.Value(), b.MapIndex(it.Key()), fmt.Sprintf("%s[%v]", path, it.Key()))...)
		}
	case reflect.Slice, reflect.Array:
		for i := range a.Len() {
			out = append(out, shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				out = append(out, shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
			}
		}
	}
	return out
}

// A clone equals the record and shares nothing modifiable with it but
// its pod entries, which are changed only through edit, every field filled
// (so a field added later is covered too).
func TestCloneSharesNothing(t *testing.T) {
	var r Rollout
	fill(reflect.ValueOf(&r).Elem(), 0)
	if len(r.Pods) == 0 || r.Sync == nil || len(r.Sync.Resources) == 0 || r.Restart == nil || len(r.Gone) == 0 {
		t.Fatalf("fill left parts of the record empty: %+v", r)
	}
	c := r.Clone()
	if !reflect.DeepEqual(&r, c) {
		t.Fatalf("the clone differs from the record:\n%+v\n%+v", r, *c)
	}
	s := shared(reflect.ValueOf(&r).Elem(), reflect.ValueOf(c).Elem(), "r")
	s = slices.DeleteFunc(s, func(path string) bool { return strings.HasPrefix(path, "r.Pods[") && !strings.Contains(path, "].") })
	if len(s) > 0 {
		t.Errorf("the clone shares %v with the record", s)
	}
	for name := range c.Pods {
		e := c.edit(name)
		e.State = "Changed"
		if c.Pods[name] != e || r.Pods[name].State == "Changed" {
			t.Error("changing the clone's pod did not change the clone's alone")
		}
	}
	var none *Rollout
	if none.Clone() != nil {
		t.Error("a nil record's clone is not nil")
	}
}

// Along rollouts driven at random (pods planned, their outcomes, reminders,
// pods gone and replaced, halts and resumes), each written as writeGroup
// does (a clone of the last record written, changed, then encoded): every
// encoding is json.Marshal's, and no record written earlier ever changes,
// though its pod entries are shared with the records after it. A pod
// changed in place instead of through edit fails here.
func TestEarlierRecordsNeverChange(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			w := newWorld(30, 4)
			r := Begin(nil, "u-1", wl, push, Options{Budget: 5}, t0)
			var e Encoder
			type written struct {
				r   *Rollout
				raw []byte
			}
			var history []written
			now := t0
			for step := 0; step < 300 && !r.Phase.Finished(); step++ {
				r = r.Clone()
				now = now.Add(time.Second)
				in := fmt.Sprint("in-", step)
				var flying []string
				for name, p := range r.Pods {
					if p.State == InFlight {
						flying = append(flying, name)
					}
				}
				slices.Sort(flying)
				switch n := rng.IntN(20); {
				case n == 0:
					name := fmt.Sprintf("web-%02d", rng.IntN(30))
					if c := w[name]; c != nil {
						c.Pod.UID += "x" // replaced
					}
				case n == 1 && r.Phase == Halted:
					Resume(r, now)
				case n == 2 && len(flying) > 0:
					p := r.Pods[flying[rng.IntN(len(flying))]]
					Remind(r, p.Name, p.UID, p.UpgradeID, p.PlannedAt, p.Reminded, now)
				case len(flying) > 0:
					name := flying[rng.IntN(len(flying))]
					typ := []string{events.UpgradeSucceeded, events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack}[rng.IntN(4)]
					o := outcome(r, name)
					if rng.IntN(10) == 0 {
						typ, o.Reason = events.UpgradeFailed, "PodDeleted"
					}
					Record(r, typ, o, in, now)
				}
				Plan(r, w.cands(), in, false, now)
				Settle(r, in, now)
				raw, err := e.Encode("Deployment/shop/web", r)
				if err != nil {
					t.Fatal(err)
				}
				want, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(string(want), string(raw)); d != "" {
					t.Fatalf("step %d: Encode differs from json.Marshal (-want +got):\n%s", step, d)
				}
				history = append(history, written{r, raw})
			}
			for i, h := range history {
				got, err := json.Marshal(h.r)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(string(h.raw), string(got)); d != "" {
					t.Fatalf("the record written at step %d changed afterwards (-then +now):\n%s", i, d)
				}
			}
		})
	}
}
