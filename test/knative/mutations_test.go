package knative_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/test/knative"
)

// Mutations show that TestChain fails when the wiring is wrong. Run
//
//	INPLACE_KNATIVE_MUTATE=trigger-filter go test ./test/knative -run TestChain
//	INPLACE_KNATIVE_MUTATE=reply-type go test ./test/knative -run TestChain
//
// and TestChain fails (no rollout.completed; the events through the Broker
// stop at image.prepulled), where it passes without the variable.
//
//   - trigger-filter: patch-pod's Trigger filters on a type nobody emits
//     (dev.inplace.image.prepulled.v2), so image.prepulled reaches no one.
//   - reply-type: pre-pull's replies reach the Broker typed
//     dev.inplace.image.prepulled.v2 (a proxy in front of the function
//     rewrites Ce-Type), so no Trigger matches them.
const wrongType = "dev.inplace.image.prepulled.v2"

func mutation(name string) (func([]*unstructured.Unstructured), error) {
	switch name {
	case "":
		return nil, nil
	case "trigger-filter":
		return func(objs []*unstructured.Unstructured) {
			for _, o := range objs {
				if o.GetKind() == "Trigger" && o.GetName() == "inplace-patch-pod" {
					_ = unstructured.SetNestedField(o.Object, wrongType, "spec", "filter", "attributes", "type")
				}
			}
		}, nil
	case "reply-type":
		return func([]*unstructured.Unstructured) {}, nil
	}
	return nil, fmt.Errorf("INPLACE_KNATIVE_MUTATE=%q: want trigger-filter or reply-type", name)
}

// applyRuntimeMutation puts the reply-type proxy in front of pre-pull.
func applyRuntimeMutation(p *knative.Project, name string) error {
	if name != "reply-type" {
		return nil
	}
	f := p.Functions["inplace-pre-pull"]
	if f == nil {
		return fmt.Errorf("no inplace-pre-pull service")
	}
	target, _ := url.Parse("http://" + f.Addr)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Header.Get("Ce-Type") == events.ImagePrepulled {
			r.Header.Set("Ce-Type", wrongType)
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, rp) }()
	p.Node.Route(f.Host, ln.Addr().String())
	return nil
}
