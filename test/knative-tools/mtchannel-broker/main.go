// Command mtchannel-broker is Knative Eventing's MTChannelBasedBroker
// reconciler process (Brokers and Triggers), with health probes off (see
// the package doc).
package main

import (
	kubefilteredfactory "knative.dev/pkg/client/injection/kube/informers/factory/filtered"
	"knative.dev/pkg/injection/sharedmain"
	"knative.dev/pkg/signals"

	"knative.dev/eventing/pkg/auth"
	"knative.dev/eventing/pkg/reconciler/broker"
	mttrigger "knative.dev/eventing/pkg/reconciler/broker/trigger"
)

func main() {
	ctx := kubefilteredfactory.WithSelectors(signals.NewContext(), auth.OIDCLabelSelector)
	ctx = sharedmain.WithHealthProbesDisabled(ctx)
	sharedmain.MainWithContext(ctx, "mt-broker-controller",
		broker.NewController,
		mttrigger.NewController,
	)
}
