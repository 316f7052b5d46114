package cluster

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// credentials are what a kubeconfig user presents: a client certificate
// or a bearer token.
type credentials struct {
	user     string
	certPEM  []byte
	keyPEM   []byte
	token    string
	defaultN string // default namespace of the context, if any
}

// writeKubeconfig writes a kubeconfig for server (trusting caPEM) with one
// user and context, and returns the matching rest.Config.
func writeKubeconfig(path, server string, caPEM []byte, c credentials) (*rest.Config, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["inplace"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[c.user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: c.certPEM,
		ClientKeyData:         c.keyPEM,
		Token:                 c.token,
	}
	cfg.Contexts["inplace"] = &clientcmdapi.Context{Cluster: "inplace", AuthInfo: c.user, Namespace: c.defaultN}
	cfg.CurrentContext = "inplace"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return nil, fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("rest config from %s: %w", path, err)
	}
	tune(rc)
	return rc, nil
}

// tune sets client limits fit for tests that create hundreds of objects.
// The content type stays JSON so the config also serves dynamic clients
// and custom resources; see protobuf for typed clients.
func tune(rc *rest.Config) {
	rc.QPS = 200
	rc.Burst = 400
}

// protobuf returns a copy of rc that talks protobuf, cheaper for the typed
// clientset of built-in resources.
func protobuf(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return c
}
