package keychain

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/docker/cli/cli/config"
	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SecretGetter reads one Secret (a client's CoreV1().Secrets(ns).Get).
type SecretGetter interface {
	Get(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// ClientSecrets reads Secrets through a client: only the named ones are
// read, when a poll needs them; nothing watches every Secret.
type ClientSecrets struct{ Client kubernetes.Interface }

// Get implements SecretGetter.
func (c ClientSecrets) Get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return c.Client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// FromSecrets reads the docker credentials of pull secrets
// (kubernetes.io/dockerconfigjson or the older kubernetes.io/dockercfg),
// as the kubelet would for the pods that name them. Credential helpers and
// stores a secret may name are never run: only the credentials written in
// it are used.
func FromSecrets(ctx context.Context, secrets SecretGetter, refs []string) (authn.Keychain, error) {
	var kc keychain
	for _, ref := range refs {
		ns, name, ok := strings.Cut(ref, "/")
		if !ok {
			return nil, fmt.Errorf("pull secret %q: want namespace/name", ref)
		}
		s, err := secrets.Get(ctx, ns, name)
		if err != nil {
			return nil, fmt.Errorf("pull secret %s: %w", ref, err)
		}
		auths, err := parseDockerConfig(s)
		if err != nil {
			return nil, fmt.Errorf("pull secret %s: %w", ref, err)
		}
		kc = append(kc, auths)
	}
	return kc, nil
}

// hostAuths are the credentials of one secret by registry host.
type hostAuths map[string]authn.AuthConfig

func parseDockerConfig(s *corev1.Secret) (hostAuths, error) {
	var raw []byte
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		raw = s.Data[corev1.DockerConfigJsonKey]
	case corev1.SecretTypeDockercfg:
		// The older format is the "auths" map alone.
		raw = append(append([]byte(`{"auths":`), s.Data[corev1.DockerConfigKey]...), '}')
	default:
		return nil, fmt.Errorf("type %s is not %s or %s", s.Type, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg)
	}
	cf, err := config.LoadFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("docker config: %w", err)
	}
	out := hostAuths{}
	for key, a := range cf.AuthConfigs {
		out[hostOf(key)] = authn.AuthConfig{Username: a.Username, Password: a.Password,
			IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken}
	}
	return out, nil
}

// hostOf reduces a docker config key ("https://index.docker.io/v1/",
// "registry.example.com:5000/v2") to the host it names, Docker Hub's
// spellings to "index.docker.io" as go-containerregistry names it.
func hostOf(key string) string {
	h := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(key), "https://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	switch h {
	case "docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return "index.docker.io"
	}
	return h
}

// keychain resolves a registry to the first secret holding its credentials.
type keychain []hostAuths

// Resolve implements authn.Keychain.
func (k keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	host := hostOf(r.RegistryStr())
	for _, auths := range k {
		if a, ok := auths[host]; ok {
			return authn.FromConfig(a), nil
		}
	}
	return authn.Anonymous, nil
}
