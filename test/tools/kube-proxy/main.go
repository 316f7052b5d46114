// Command kube-proxy is the real Kubernetes service proxy, built from the
// k8s.io/kubernetes module for the test world's real nodes (test/realnode),
// where it runs in each node's network namespace and programs the Services'
// ClusterIPs there.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewProxyCommand()))
}
