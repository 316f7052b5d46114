// Command demo is `make demo`: the whole chain on embedded defaults, nothing
// installed by hand. It starts the test world (a real kube-apiserver,
// controller-manager and etcd, simulated nodes, a real OCI registry),
// embedded NATS and `inplace run`; deploys a small shop that opts in; pushes
// a new image (the registry's real webhook starts everything); shows the
// rollout live; proves with a before/after table that every pod kept its
// UID, IP and node and gained one restart; and replays the upgrade in a
// dry run to show nothing more would change.
//
// With INPLACE_NODES=real the world's nodes are real (kubelet, containerd,
// runc, kube-proxy, CoreDNS; test/realnode) and the images the app of
// test/images: the table is read from the running containers' status, each
// pod's app answers GET / with its version, and so does the Service web.
//
// With -knative (`make demo-knative`) the same shop and push go through
// Knative Eventing's own components instead of `inplace run`: a real
// Broker, config/knative's Triggers and ApiServerSource, each function an
// `inplace function` process (see test/knative).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"knative.dev/pkg/signals"
)

func main() {
	knativeMode := flag.Bool("knative", false, "run the chain in Knative mode: Knative Eventing's own Broker, "+
		"Triggers and ApiServerSource, the functions as `inplace function` services (make demo-knative)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(signals.NewContext(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *knativeMode); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
