package kube

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RestConfig loads a kubeconfig (or the in-cluster config when path is
// empty) and sets the client-side rate limit explicitly: client-go's default
// of 5 QPS would cap an upgrade at a few pods per second. A negative qps
// turns the client-side limit off.
func RestConfig(path string, qps float32, burst int) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if path == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	}
	if err != nil {
		where := "in-cluster config"
		if path != "" {
			where = "kubeconfig " + path
		}
		return nil, fmt.Errorf("kubernetes: %s: %w", where, err)
	}
	cfg.QPS, cfg.Burst = qps, burst
	cfg.UserAgent = "inplace"
	return cfg, nil
}

// EventsClient is a client on cfg with a rate limit of its own, for the
// Kubernetes Events: a burst of them never delays a write of the chain.
func EventsClient(cfg *rest.Config, qps float32, burst int) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = qps, burst, nil
	return Client(c)
}

// Client makes a typed clientset for cfg.
func Client(cfg *rest.Config) (kubernetes.Interface, error) {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return c, nil
}
