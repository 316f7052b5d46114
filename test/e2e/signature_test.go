package e2e_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/inputs/signature"
	"github.com/inplace-dev/inplace/pkg/inputs/signature/signtest"
	"github.com/inplace-dev/inplace/test/world"
)

// withConfig sets config-inplace keys for the test (the stack watches it),
// waits until the stack applies them, and removes the ConfigMap afterwards.
func (e *env) withConfig(data map[string]string) {
	e.t.Helper()
	want, err := config.ParseDefaults(data)
	if err != nil {
		e.t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.ConfigMapName, Namespace: "inplace-system"}, Data: data}
	cms := e.w.Client().CoreV1().ConfigMaps("inplace-system")
	if _, err := cms.Create(e.t.Context(), cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cms.Delete(context.WithoutCancel(e.t.Context()), cm.Name, metav1.DeleteOptions{}) })
	err = world.Eventually(e.t.Context(), 30*time.Second, "config-inplace applied", func(context.Context) (bool, error) {
		return reflect.DeepEqual(e.s.App.Defaults.Load(), want), nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// sign attaches a bundle of repo@digest signed by key, as cosign v3 does.
func (e *env) sign(key *signtest.Key, repo, digest string) {
	e.t.Helper()
	name := e.w.Registry.Host() + "/" + e.ns + "/" + repo
	b, err := key.Sign(signtest.Statement(name, digest))
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := signtest.Attach(e.t.Context(), e.w.Registry.Host(), e.ns+"/"+repo, digest, b, e.w.Registry.Transport()); err != nil {
		e.t.Fatal(err)
	}
}

// A workload that requires a signature by its key: a signed push rolls
// out, with the signer on every upgrade.planned; an unsigned push (once
// signature-wait has passed) and one signed by another key change
// nothing, and the reason is in compute-spec's dead letter, a Warning
// Event on the Deployment and inplace status.
func TestSignatureGate(t *testing.T) {
	e := newEnv(t)
	e.withConfig(map[string]string{"signature-wait": "10s"})
	key, err := signtest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	other, err := signtest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "release-key", Namespace: e.ns},
		Data: map[string][]byte{signature.KeySecretKey: key.PublicPEM()}}
	if _, err := e.w.Client().CoreV1().Secrets(e.ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.push("trusted", "1.0.0")
	e.deploy(workload{name: "trusted", replicas: 2, image: e.ref("trusted", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2",
			signature.AnnotationKey: "release-key"}})

	// Signed just after the push, as `cosign sign` does.
	d11 := e.push("trusted", "1.1.0")
	e.sign(key, "trusted", d11)
	e.waitAllOn("trusted", 2, d11, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/trusted", time.Minute)
	for _, ev := range e.stream(events.UpgradePlanned) {
		p, err := events.As[events.Plan](ev)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.Signer, "key "+e.ns+"/release-key (sha256:") {
			t.Errorf("upgrade.planned of %s: signer %q; want the verified key", p.Pod, p.Signer)
		}
	}
	e.settled(time.Minute)
	before := e.resourceVersions("trusted")

	refusals := []struct {
		name, tag, want string
		sign            *signtest.Key
	}{
		{"unsigned", "1.2.0", "unsigned: no Sigstore bundle is attached", nil},
		{"signed by another key", "1.3.0", "no signature on", other},
	}
	for _, r := range refusals {
		d := e.push("trusted", r.tag)
		if r.sign != nil {
			e.sign(r.sign, "trusted", d)
		}
		id := e.waitEvent(events.ImagePushed, ":"+r.tag+"@"+d, time.Minute).ID()
		var reason string
		err := world.Eventually(t.Context(), 2*time.Minute, r.name+" push dead-lettered", func(context.Context) (bool, error) {
			reason = e.deadLetters(computespec.Name)[id]
			return reason != "", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(reason, r.want) {
			t.Errorf("%s: dead letter %q; want %q", r.name, reason, r.want)
		}
		e.waitWorkloadEvent("trusted", computespec.EventRefused, r.want)
		out, err := e.inplace(append([]string{"status"}, e.bus()...)...)
		if err != nil || !strings.Contains(out, "Refused") || !strings.Contains(out, computespec.ReasonSignatureRefused) ||
			!strings.Contains(out, r.want) {
			t.Errorf("%s: inplace status: %v\n%s", r.name, err, out)
		}
	}
	e.settled(time.Minute)
	after := e.resourceVersions("trusted")
	for pod, rv := range before {
		if after[pod] != rv {
			t.Errorf("pod %s changed after a refused push (resourceVersion %s → %s)", pod, rv, after[pod])
		}
	}
	e.waitAllOn("trusted", 2, d11, time.Second)
}

// waitWorkloadEvent waits for an Event of reason on the Deployment whose
// message contains sub.
func (e *env) waitWorkloadEvent(deployment, reason, sub string) {
	e.t.Helper()
	e.waitK8sEvent(deployment, reason, sub)
}
