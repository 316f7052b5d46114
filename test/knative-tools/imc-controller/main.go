// Command imc-controller is Knative Eventing's InMemoryChannel reconciler
// process without its admission webhooks and with health probes off (see
// the package doc).
package main

import (
	"knative.dev/pkg/injection/sharedmain"
	"knative.dev/pkg/signals"

	"knative.dev/eventing/pkg/reconciler/inmemorychannel/controller"
)

func main() {
	ctx := sharedmain.WithHealthProbesDisabled(signals.NewContext())
	sharedmain.MainWithContext(ctx, "inmemorychannel-controller", controller.NewController)
}
