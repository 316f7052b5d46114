package replay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m, cluster.Options{}) }

// stub is a function whose handling is handle, on the dry-run client.
type stub struct {
	name   string
	types  []string
	handle func(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error)
}

func (s stub) Name() string    { return s.name }
func (s stub) Types() []string { return s.types }
func (s stub) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	return s.handle(ctx, e)
}

// A function's writes through the dry-run client reach the real API
// server as dry runs: the result shows each write as a diff of the live
// object (or the API server's refusal), and nothing is stored.
func TestDryRunShowsWritesAndStoresNothing(t *testing.T) {
	c := cluster.Shared(t)
	ns := c.NewNamespace(t)
	ctx := t.Context()
	if _, err := c.Client().CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"mode": "old"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writes := &kube.DryRun{}
	dry, err := kubernetes.NewForConfig(writes.Wrap(c.RestConfig()))
	if err != nil {
		t.Fatal(err)
	}
	out := pushed(t)
	out.SetID("out-1")
	writer := stub{name: "writer", types: []string{events.ImagePushed}, handle: func(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
		cms := dry.CoreV1().ConfigMaps(ns)
		if _, err := cms.Patch(ctx, "cfg", types.MergePatchType, []byte(`{"data":{"mode":"new"}}`), metav1.PatchOptions{}); err != nil {
			return nil, err
		}
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name"}}, metav1.CreateOptions{})
		if err == nil {
			return nil, errors.New("an invalid name was accepted")
		}
		return []cloudevents.Event{out}, nil
	}}
	d := &DryRunner{Functions: []runner.Function{writer}, Writes: writes, Live: c.Client().CoreV1().RESTClient()}
	res, err := d.Run(ctx, pushed(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Settlement != settle.Done.String() || len(res[0].Outputs) != 1 || len(res[0].Changes) != 2 {
		t.Fatalf("results %+v: want writer's, ack, one output, two changes", res)
	}
	patch, refused := res[0].Changes[0], res[0].Changes[1]
	var changed []string
	for _, l := range strings.Split(patch.Diff, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			changed = append(changed, l)
		}
	}
	if diff := cmp.Diff([]string{"-  mode: old", "+  mode: new"}, changed); diff != "" {
		t.Errorf("lines the patch changes (-want +got):\n%s\nin\n%s", diff, patch.Diff)
	}
	if refused.Verb != "POST" || !strings.Contains(refused.Refused, "Not_A_Name") || refused.Diff != "" {
		t.Errorf("the refused create: %+v, want the API server's refusal naming Not_A_Name", refused)
	}
	live, err := c.Client().CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil || live.Data["mode"] != "old" {
		t.Errorf("live ConfigMap after the dry run: %v, %v; want mode old", live.Data, err)
	}
	if _, err := c.Client().CoreV1().ConfigMaps(ns).Get(ctx, "Not_A_Name", metav1.GetOptions{}); err == nil {
		t.Error("the refused ConfigMap exists")
	}
}

// Each handler outcome is shown as the settlement the bus would make, with
// its reason; only the functions that take the event (and fn, when named)
// run it.
func TestDryRunSettlements(t *testing.T) {
	fail := func(err error) func(context.Context, cloudevents.Event) ([]cloudevents.Event, error) {
		return func(context.Context, cloudevents.Event) ([]cloudevents.Event, error) { return nil, err }
	}
	fns := []runner.Function{
		stub{"ok", []string{events.ImagePushed}, fail(nil)},
		stub{"refuses", []string{events.ImagePushed}, fail(settle.Permanentf("forged"))},
		stub{"waits", []string{events.ImagePushed}, fail(settle.NotYet(3*time.Second, "grace"))},
		stub{"fails", []string{events.ImagePushed}, fail(errors.New("conflict"))},
		stub{"panics", []string{events.ImagePushed}, func(context.Context, cloudevents.Event) ([]cloudevents.Event, error) { panic("bug") }},
		stub{"other", []string{events.PodPatched}, fail(errors.New("ran on an event it does not take"))},
	}
	d := &DryRunner{Functions: fns, Writes: &kube.DryRun{}}
	res, err := d.Run(t.Context(), pushed(t), "")
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ Function, Settlement, Reason string }
	var all []got
	for _, r := range res {
		reason, _, _ := strings.Cut(r.Reason, "\n") // a panic's stack follows its first line
		all = append(all, got{r.Function, r.Settlement, reason})
	}
	want := []got{
		{"ok", "ack", ""},
		{"refuses", "dead-letter", "forged"},
		{"waits", "later", "not yet (again in 3s): grace (again in 3s)"},
		{"fails", "retry", "conflict"},
		{"panics", "retry", "panic: bug"},
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("settlements (-want +got):\n%s", diff)
	}
	one, err := d.Run(t.Context(), pushed(t), "waits")
	if err != nil || len(one) != 1 || one[0].Function != "waits" {
		t.Errorf("Run for fn waits: %+v, %v; want waits' result only", one, err)
	}
	bad := pushed(t)
	bad.SetType(events.PodPatched) // no plan in its data
	if _, err := d.Run(t.Context(), bad, ""); err == nil {
		t.Error("an event that is not valid was run")
	}
}
