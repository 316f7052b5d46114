// Command kubelet is the real Kubernetes kubelet, built from the
// k8s.io/kubernetes module for the test world's real nodes (test/realnode),
// where it runs pods on containerd with runc and the CNI plugins.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
