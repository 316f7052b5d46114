// Command eventing-controller is Knative Eventing's controller process with
// the reconcilers a Broker on the in-memory channel and an ApiServerSource
// need: Subscription (each Trigger subscribes to the Broker's channel) and
// ApiServerSource (it makes the adapter's Deployment and reports the
// source Ready). Health probes are off (see the package doc).
package main

import (
	kubefilteredfactory "knative.dev/pkg/client/injection/kube/informers/factory/filtered"
	"knative.dev/pkg/injection/sharedmain"
	"knative.dev/pkg/signals"

	"knative.dev/eventing/pkg/auth"
	"knative.dev/eventing/pkg/eventingtls"
	"knative.dev/eventing/pkg/reconciler/apiserversource"
	"knative.dev/eventing/pkg/reconciler/subscription"
)

func main() {
	ctx := kubefilteredfactory.WithSelectors(signals.NewContext(),
		auth.OIDCLabelSelector, eventingtls.TrustBundleLabelSelector)
	ctx = sharedmain.WithHealthProbesDisabled(ctx)
	sharedmain.MainWithContext(ctx, "controller",
		subscription.NewController,
		apiserversource.NewController,
	)
}
