package rollout

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/inplace-dev/inplace/events"
)

// planned is a record of n pods, the first half in flight, with pods
// gone and history, as compute-spec writes it.
func planned(t *testing.T, n int) *Rollout {
	t.Helper()
	r := Begin(nil, "u-1", wl, push, Options{Budget: n / 2}, t0)
	Plan(r, newWorld(n, 3).cands(), "push", false, t0)
	r.Gone = []*Pod{{Name: "web-gone", UID: "uid-gone", State: Deleted}}
	r.History = map[string]History{"r/shop/web": {Digest: "sha256:1"}}
	return r
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// read is what a view reads of a record: its top level and every pod.
func read(t *testing.T, v *View) *Rollout {
	t.Helper()
	got := *v.Record()
	if got.Pods != nil {
		t.Fatalf("the view's top level holds pods: %v", got.Pods)
	}
	for p, err := range v.Pods() {
		if err != nil {
			t.Fatal(err)
		}
		if got.Pods == nil {
			got.Pods = map[string]*Pod{}
		}
		got.Pods[p.Name] = p
	}
	return &got
}

func TestViewReadsWhatAWholeDecodeReads(t *testing.T) {
	indented, err := json.MarshalIndent(planned(t, 6), "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"compact", encode(t, planned(t, 20))},
		{"indented", indented},
		{"no pods", encode(t, &Rollout{UpgradeID: "u-1", Phase: Completed})},
		{"pods null", []byte(`{"upgradeID":"u-1","pods":null,"wave":2}`)},
		{"pods last", []byte(`{"upgradeID":"u-1","phase":"Running","pods":{"a":{"name":"a","state":"InFlight"}}}`)},
		{"escaped names and strings", []byte(`{"reason":"a \"}\" b","pods":{"w\u0065b-1":{"name":"web-1","reason":"{[\"\\"}},"message":"]"}`)},
		{"numbers and literals around pods", []byte(` { "wave" : 3 , "pods" : { } , "history" : {"x":{"digest":"d"}} } `)},
		{"pods in another case", []byte(`{"Pods":{"a":{"name":"a"}},"phase":"Running"}`)},
		{"pods twice", []byte(`{"pods":{"a":{"name":"a"}},"pods":{"b":{"name":"b"}}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want Rollout
			if err := json.Unmarshal(tc.raw, &want); err != nil {
				t.Fatal(err)
			}
			v, err := NewView(tc.raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&want, read(t, v), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("view differs from the whole decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestViewRefusesWhatIsNotARecord(t *testing.T) {
	for _, raw := range []string{`{`, `[]`, `{"pods":{"a":1}`, `{"phase":7,"pods":{}}`, `{"pods":{}} x`, `{"pods":[]}`} {
		if v, err := NewView([]byte(raw), nil); err == nil {
			for _, err = range v.Pods() {
			}
			if err == nil {
				t.Errorf("%s: read without an error", raw)
			}
		}
	}
	v, err := NewView([]byte(`{"pods":{"a":{"name":"a"},"b":{"name":7}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := v.Pod("a"); err != nil || p.Name != "a" {
		t.Errorf("pod a: %v, %v", p, err)
	}
	if _, err := v.Pod("b"); err == nil {
		t.Error("pod b, not a pod, was read without an error")
	}
}

// A view decodes only the pods read; a newer revision decodes again only
// the pods whose entry changed, and never shows an older entry.
func TestViewsOfNewerRevisionsDecodeChangedPodsOnly(t *testing.T) {
	const key = "Deployment/shop/web"
	r := planned(t, 10)
	var d Decoded
	v1, err := d.View(key, 1, encode(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := d.View(key, 1, encode(t, r)); again != v1 {
		t.Fatal("one revision was viewed twice, not shared")
	}
	a1, _ := v1.Pod("web-00")
	b1, _ := v1.Pod("web-01")
	if len(v1.pods) != 2 {
		t.Fatalf("reading 2 pods decoded %d", len(v1.pods))
	}
	Record(r, events.UpgradeSucceeded, outcome(r, "web-01"), "in", t0)
	v2, err := d.View(key, 2, encode(t, r))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := v2.Pod("web-00")
	b2, _ := v2.Pod("web-01")
	if a2 != a1 {
		t.Error("a pod unchanged since the last revision was decoded again")
	}
	if b2 == b1 || b2.State != Succeeded || b1.State != InFlight {
		t.Errorf("revision 2 reads web-01 %s (revision 1: %s), want Succeeded, a pod of its own", b2.State, b1.State)
	}
	if old, _ := d.View(key, 1, encode(t, r)); old != v1 {
		t.Error("revision 1, still kept, was not shared")
	}
	if x, _ := d.View(key, 0, encode(t, r)); x == v2 {
		t.Error("revision 0 (unknown) was taken from the cache")
	}
}

// A record decoded whole at a revision (a writer's Put, Get) is viewed
// without a walk of its bytes.
func TestViewOfADecodedRevisionIsThatRecord(t *testing.T) {
	const key = "Deployment/shop/web"
	r := planned(t, 4)
	var d Decoded
	d.Put(key, 5, r)
	v, err := d.View(key, 5, []byte("not read"))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := v.Pod("web-00"); p != r.Pods["web-00"] {
		t.Error("the view of a decoded revision decoded its pod again")
	}
	if diff := cmp.Diff(r, read(t, v)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, _ := d.Get(key, 5, nil); got != r {
		t.Error("Get no longer finds the record Put after a View")
	}
}

// BenchmarkRecordView is a guard's read of one pod of a 1,000-pod record
// at a new revision (compare BenchmarkRecordWrite/decode).
func BenchmarkRecordView(b *testing.B) {
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1000}, t0)
	Plan(r, newWorld(1000, 3).cands(), "push", false, t0)
	raw, err := json.Marshal(r)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		v, err := NewView(raw, nil)
		if err != nil {
			b.Fatal(err)
		}
		if p, err := v.Pod("web-500"); p == nil || err != nil {
			b.Fatal(p, err)
		}
	}
}
