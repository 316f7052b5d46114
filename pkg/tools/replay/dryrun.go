package replay

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"k8s.io/client-go/rest"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// DryRunner runs events through functions built on a dry-run client.
type DryRunner struct {
	// Functions are built on a client wrapped by Writes.
	Functions []runner.Function
	// Writes records what the functions' client would have written.
	Writes *kube.DryRun
	// Live reads objects as they are now, to diff against.
	Live rest.Interface
	// Timeout bounds one function's handling of one event; default 30s.
	Timeout time.Duration
}

// Result is what one function would do with one event.
type Result struct {
	Function string
	Event    cloudevents.Event
	// Settlement is how the input would be settled: ack, retry, later, dead-letter.
	Settlement string
	// Reason is the error behind a settlement other than ack.
	Reason  string
	Outputs []cloudevents.Event
	Changes []Change
}

// Change is one write the function would make, as a diff of the object.
type Change struct {
	Verb, Path string
	// Diff is a unified diff of the object, live → as the write would leave it.
	Diff string
	// Refused is the API server's answer when it would reject the write.
	Refused string
}

// Run feeds e to every function that takes it (only fn when fn is set).
func (d *DryRunner) Run(ctx context.Context, e cloudevents.Event, fn string) ([]Result, error) {
	e, err := events.Normalize(e)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, f := range d.Functions {
		if (fn != "" && f.Name() != fn) || !slices.Contains(f.Types(), e.Type()) {
			continue
		}
		r := d.handle(ctx, f, e)
		for _, w := range d.Writes.Writes() {
			r.Changes = append(r.Changes, d.change(ctx, w))
		}
		out = append(out, r)
	}
	return out, nil
}

func (d *DryRunner) handle(ctx context.Context, f runner.Function, e cloudevents.Event) (r Result) {
	r = Result{Function: f.Name(), Event: e}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			r.Settlement, r.Reason = settle.Retry.String(), fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	outs, err := f.Handle(hctx, e)
	kind, delay := settle.Classify(err)
	r.Settlement = kind.String()
	switch kind {
	case settle.Done:
		r.Outputs = outs
	case settle.Later:
		r.Reason = fmt.Sprintf("%v (again in %s)", err, delay)
	default:
		r.Reason = err.Error()
	}
	return r
}
