package knative

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AsyncHandlerAnnotation makes an in-memory channel answer before it
// delivers (Knative copies it from the Broker to the Broker's channel).
const AsyncHandlerAnnotation = "messaging.knative.dev/async-handler"

// Local makes the changes to config/overlays/knative that a run on this
// host needs, and only those (docs/knative.md, "On the test world"):
//
//   - the Broker's channel (ConfigMap inplace-broker-channel) is the
//     in-memory channel instead of NatsJetStreamChannel: eventing-natss is
//     not on the Go module proxy, so it cannot be built here;
//   - the Broker carries messaging.knative.dev/async-handler: "true", which
//     Knative copies to its in-memory channel: in its default synchronous
//     mode the channel answers a sender only after every subscriber (and
//     every retry) has answered, and since each reply goes back through
//     the Broker, the receiver's publish of image.pushed would wait for the
//     whole rollout and time out. Asynchronous, it answers 202 at once and
//     retries in the background, as the JetStream channel does;
//   - compute-spec's NATS (ConfigMap inplace-function) is the test's NATS
//     server, with one KV replica: an in-cluster NATS name cannot be
//     reached from the host (NATS is no HTTP, the proxy cannot carry it),
//     and one server cannot hold three replicas.
func Local(objs []*unstructured.Unstructured, natsURL string) error {
	channel := find(objs, "ConfigMap", Namespace, "inplace-broker-channel")
	fn := find(objs, "ConfigMap", Namespace, "inplace-function")
	if channel == nil || fn == nil {
		return fmt.Errorf("config/overlays/knative: no ConfigMap inplace-broker-channel or inplace-function")
	}
	channel.Object["data"] = map[string]any{"channel-template-spec": "apiVersion: messaging.knative.dev/v1\nkind: InMemoryChannel\n"}
	broker := find(objs, "Broker", Namespace, BrokerName)
	if broker == nil {
		return fmt.Errorf("config/overlays/knative: no Broker %s", BrokerName)
	}
	ann := broker.GetAnnotations()
	ann[AsyncHandlerAnnotation] = "true"
	broker.SetAnnotations(ann)
	if err := unstructured.SetNestedField(fn.Object, natsURL, "data", "INPLACE_NATS_URL"); err != nil {
		return err
	}
	return unstructured.SetNestedField(fn.Object, "1", "data", "INPLACE_REPLICAS")
}

// find is the object of kind, namespace and name.
func find(objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}
