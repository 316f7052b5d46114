package knative

import (
	"context"
	"net/http"
	"net/url"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// HTTPClient reaches cluster names through the node's proxy, as the
// node's processes do.
func (n *Node) HTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	u, _ := url.Parse(n.proxy.URL())
	t.Proxy = http.ProxyURL(u)
	return &http.Client{Transport: t}
}

// Client is a CloudEvents client sending through the node's proxy (to a
// Broker's address, say).
func (n *Node) Client() (cloudevents.Client, error) {
	return cloudevents.NewClientHTTP(cehttp.WithClient(*n.HTTPClient()))
}

// Create creates objects of any kind (Knative's included); those that
// exist are left alone.
func (n *Node) Create(ctx context.Context, objs ...*unstructured.Unstructured) error {
	return n.apply.create(ctx, objs...)
}

// Dynamic is the node's dynamic client (admin).
func (n *Node) Dynamic() dynamic.Interface { return n.apply.dyn }
