package knative

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/test/manifests"
	"github.com/inplace-dev/inplace/test/registry"
)

// Names from config/knative.
const (
	Namespace       = "inplace-system"
	BrokerName      = "inplace"
	ReceiverService = "inplace-receiver"
	// HooksRoute is the receiver's route in config/hooks.
	HooksRoute = "registry"
	// RecorderTrigger is the test's own Trigger: every event of the
	// Broker, to a Recorder.
	RecorderTrigger = "inplace-test-recorder"
)

// ProjectOptions tune StartProject.
type ProjectOptions struct {
	// Mutate changes the rendered manifests before they are created,
	// after the local changes (see Local): tests break them on purpose.
	Mutate func(objs []*unstructured.Unstructured)
}

// Project is inplace in Knative mode on a node: config/overlays/knative
// created in the API server (with the Local changes), every Knative
// Service served by an `inplace function` process, the Broker, Triggers
// and ApiServerSource Ready, compute-spec's KV on a NATS server of its
// own, the world's registry posting to the receiver.
type Project struct {
	Node      *Node
	Functions map[string]*Function
	// Broker is the Broker's address (its ingress).
	Broker string
	// HooksURL is the receiver's registry route.
	HooksURL string
	NATS     *embednats.Server
	// Recorder receives every event of the Broker (RecorderTrigger).
	Recorder *Recorder
	// Objects are the manifests as created.
	Objects []*unstructured.Unstructured
}

// StartProject installs and starts inplace in Knative mode on n.
func StartProject(ctx context.Context, n *Node, opts ProjectOptions) (p *Project, err error) {
	p = &Project{Node: n}
	defer func() {
		if err != nil {
			p.Stop()
			p = nil
		}
	}()
	if p.NATS, err = embednats.Start(embednats.Options{DataDir: filepath.Join(n.dir, "nats"), Port: -1}); err != nil {
		return nil, err
	}
	root, err := manifests.RepoRoot()
	if err != nil {
		return nil, err
	}
	if p.Objects, err = manifests.Objects(filepath.Join(root, "config", "overlays", "knative")); err != nil {
		return nil, err
	}
	if err := Local(p.Objects, p.NATS.URL()); err != nil {
		return nil, err
	}
	if opts.Mutate != nil {
		opts.Mutate(p.Objects)
	}
	token, err := p.create(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.serve(ctx, root); err != nil {
		return nil, err
	}
	if err := p.waitReady(ctx); err != nil {
		return nil, err
	}
	return p, p.notify(token)
}

// create creates the manifests and the receiver's Secret (which the user
// creates by hand, see config/hooks) and waits for the Broker.
func (p *Project) create(ctx context.Context) (string, error) {
	if err := p.Node.Create(ctx, p.Objects...); err != nil {
		return "", err
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "inplace-hooks", Namespace: Namespace},
		StringData: map[string]string{"registry-token": "Bearer " + token}}
	_, err := p.Node.World.Client().CoreV1().Secrets(Namespace).Create(ctx, secret, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	broker, err := p.Node.WaitReady(ctx, Brokers, Namespace, BrokerName, 2*time.Minute)
	if err != nil {
		return "", err
	}
	p.Broker = Address(broker)
	return token, nil
}

// serve builds the inplace binary and serves every Knative Service.
func (p *Project) serve(ctx context.Context, root string) error {
	bin := filepath.Join(p.Node.dir, "inplace")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/inplace")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/inplace: %w\n%s", err, out)
	}
	var err error
	p.Functions, err = p.Node.Serve(ctx, bin, ofKind(p.Objects, "Service", "serving.knative.dev/v1"))
	return err
}

// waitReady waits for every Trigger and ApiServerSource of the manifests,
// then adds the recorder's Trigger and waits for it.
func (p *Project) waitReady(ctx context.Context) error {
	for _, t := range ofKind(p.Objects, "Trigger", "eventing.knative.dev/v1") {
		if _, err := p.Node.WaitReady(ctx, Triggers, t.GetNamespace(), t.GetName(), 2*time.Minute); err != nil {
			return err
		}
	}
	for _, s := range ofKind(p.Objects, "ApiServerSource", "sources.knative.dev/v1") {
		if _, err := p.Node.WaitReady(ctx, ApiServerSources, s.GetNamespace(), s.GetName(), 2*time.Minute); err != nil {
			return err
		}
	}
	var err error
	if p.Recorder, err = NewRecorder(); err != nil {
		return err
	}
	t := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "eventing.knative.dev/v1", "kind": "Trigger",
		"metadata": map[string]any{"name": RecorderTrigger, "namespace": Namespace,
			"labels": map[string]any{"eventing.knative.dev/broker": BrokerName}},
		"spec": map[string]any{"broker": BrokerName, "subscriber": map[string]any{"uri": p.Recorder.URL()}},
	}}
	if err := p.Node.Create(ctx, t); err != nil {
		return err
	}
	_, err = p.Node.WaitReady(ctx, Triggers, Namespace, RecorderTrigger, 2*time.Minute)
	return err
}

// notify points the world's registry at the receiver's route.
func (p *Project) notify(token string) error {
	f := p.Functions[ReceiverService]
	if f == nil {
		return fmt.Errorf("no Knative Service %s in the manifests", ReceiverService)
	}
	p.HooksURL = "http://" + f.Addr + "/hooks/" + HooksRoute
	return p.Node.World.Registry.SetNotify(registry.Notify{URL: p.HooksURL,
		Headers: http.Header{"Authorization": {"Bearer " + token}}, Timeout: 5 * time.Second, Backoff: 500 * time.Millisecond})
}

// Stop ends the functions' processes and NATS (the Knative node stays).
func (p *Project) Stop() {
	if p == nil {
		return
	}
	for _, f := range p.Functions {
		f.Stop()
	}
	if p.Recorder != nil {
		p.Recorder.Close()
	}
	if p.NATS != nil {
		p.NATS.Shutdown()
	}
}

// ofKind picks the objects of kind and apiVersion.
func ofKind(objs []*unstructured.Unstructured, kind, apiVersion string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && o.GetAPIVersion() == apiVersion {
			out = append(out, o)
		}
	}
	return out
}
