// Command kube-scheduler is the real Kubernetes scheduler, built from the
// k8s.io/kubernetes module for the test world's hollow nodes.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
