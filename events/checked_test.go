package events

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
)

// podUpdated is a pod.updated carrying testdata/pod_running.json.
func podUpdated(tb testing.TB, id string) cloudevents.Event {
	tb.Helper()
	raw, err := os.ReadFile("testdata/pod_running.json")
	if err != nil {
		tb.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(raw, &pod); err != nil {
		tb.Fatal(err)
	}
	e, err := New(id, PodUpdated, Source("test"), pod.Namespace+"/"+pod.Name, PodUpdatedData{Pod: pod})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// The data NormalizeChecked decoded is taken by the first AsIn for that
// event, and only by it: a second call, or a call for another event,
// decodes the event's own data.
func TestAsInTakesTheCheckedDataOnce(t *testing.T) {
	e := podUpdated(t, "in-1")
	e, data, err := NormalizeChecked(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := data.(PodUpdatedData); !ok {
		t.Fatalf("NormalizeChecked decoded %T, want PodUpdatedData", data)
	}
	ctx := WithChecked(context.Background(), e, data)
	// The event's data changes after the check: only a fresh decode sees it.
	changed := podUpdated(t, "in-1")
	pod := data.(PodUpdatedData).Pod
	pod.Name = "other"
	if err := changed.SetData(cloudevents.ApplicationJSON, PodUpdatedData{Pod: pod}); err != nil {
		t.Fatal(err)
	}
	if _, err := AsIn[PatchedData](ctx, changed); err == nil {
		t.Error("AsIn[PatchedData] of a pod.updated: no error")
	}
	first, err := AsIn[PodUpdatedData](ctx, changed)
	if err != nil {
		t.Fatal(err)
	}
	second, err := AsIn[PodUpdatedData](ctx, changed)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := first.Pod.Name, data.(PodUpdatedData).Pod.Name; got != want {
		t.Errorf("first AsIn: pod %q, want the checked data's %q", got, want)
	}
	if got := second.Pod.Name; got != "other" {
		t.Errorf("second AsIn: pod %q, want the event's own data (other)", got)
	}
	other := podUpdated(t, "in-2")
	ctx = WithChecked(context.Background(), e, podUpdatedWithName(t, data, "checked"))
	if d, err := AsIn[PodUpdatedData](ctx, other); err != nil || d.Pod.Name == "checked" {
		t.Errorf("AsIn of another event: pod %q, %v; want its own data", d.Pod.Name, err)
	}
}

func podUpdatedWithName(t *testing.T, data any, name string) PodUpdatedData {
	t.Helper()
	d := data.(PodUpdatedData)
	d.Pod.Name = name
	return d
}

// BenchmarkCheckThenHandle: what a runner and its handler do with one
// pod.updated's data: check it (decode and validate) and decode it again
// in the handler, or hand the checked data over.
func BenchmarkCheckThenHandle(b *testing.B) {
	e := podUpdated(b, "in-1")
	ctx := context.Background()
	b.Run("decode-twice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in, err := Normalize(e)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := As[PodUpdatedData](in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in, data, err := NormalizeChecked(e)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := AsIn[PodUpdatedData](WithChecked(ctx, in, data), in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
