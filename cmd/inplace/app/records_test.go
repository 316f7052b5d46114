package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/kube/guard"
)

// A process running compute-spec, patch-pod and verify watches the rollout
// records once: a record holds every pod, and each watch of the bucket
// brings every revision of it across the connection, into the process,
// and to the garbage collector again. The one watch feeds compute-spec's
// wake-ups too, each after the copy holds the new value.
func TestOneWatchOfTheRecordsPerProcess(t *testing.T) {
	p, l, kv, log := busProcess(t, computespec.Name, patchpod.Name, verify.Name)
	a := &App{KV: kv}
	d := FunctionDeps{Records: map[string]guard.Records{}}
	if err := a.readRecords(t.Context(), p, l, &d, log); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	runBackground(ctx, &wg, a)
	const key = "Deployment.shop.web"
	woken := make(chan string, 1)
	wg.Go(func() {
		_ = d.WatchRecords(ctx, func(k string, v []byte) {
			got, _, err := d.Records[verify.Name].Get(ctx, k)
			if err != nil {
				got = []byte(err.Error())
			}
			woken <- string(v) + " read " + string(got)
		})
	})

	want := "{}"
	var got string
	// The watch may start after the first write: write until it is seen.
	for deadline := time.Now().Add(10 * time.Second); got == ""; {
		if time.Now().After(deadline) {
			t.Fatal("compute-spec was not woken by a record's change")
		}
		if _, err := kv.Update(ctx, key, func([]byte) ([]byte, error) { return []byte(want), nil }); err != nil {
			t.Fatal(err)
		}
		select {
		case got = <-woken:
		case <-time.After(200 * time.Millisecond):
		}
	}
	if got != want+" read "+want {
		t.Errorf("woken with %q; want the value, and the copy holding it", got)
	}
	for _, fn := range p.Functions {
		if d.Records[fn] != d.Records[computespec.Name] {
			t.Errorf("%s reads the records through a copy of its own", fn)
		}
	}
	if n := recordWatches(ctx, t, l, p); n != 1 {
		t.Errorf("the records' bucket has %d consumers (watches); want 1", n)
	}
}

// busProcess is a process running functions, its flags as `inplace run`
// binds them, on an embedded NATS server of its own, and the records'
// bucket as compute-spec opens it.
func busProcess(t *testing.T, functions ...string) (*config.Process, *links, *bus.KV, *slog.Logger) {
	t.Helper()
	var p config.Process
	if err := config.BindFlags(pflag.NewFlagSet("run", pflag.ContinueOnError), &p); err != nil {
		t.Fatal(err)
	}
	p.Functions, p.WatchPods = functions, false
	p.NATSListen, p.NATSDataDir = "127.0.0.1:-1", filepath.Join(t.TempDir(), "nats")
	log := slog.New(slog.DiscardHandler)
	l, err := connect(t.Context(), &p, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.shutdown)
	kv, err := l.bus(computespec.Name).KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return &p, l, kv, log
}

// runBackground runs a's background loops until ctx ends, in wg.
func runBackground(ctx context.Context, wg *sync.WaitGroup, a *App) {
	for _, loop := range a.Background {
		wg.Go(func() { loop(ctx) })
	}
}

// recordWatches is how many consumers (watches) the records' bucket has.
func recordWatches(ctx context.Context, t *testing.T, l *links, p *config.Process) int {
	t.Helper()
	info, err := l.admin.JetStream().Stream(ctx, "KV_"+p.Bus.KVBucket)
	if err != nil {
		t.Fatal(err)
	}
	return info.CachedInfo().State.Consumers
}
