// Command kube-controller-manager is the real controller manager (Deployment,
// ReplicaSet, StatefulSet, DaemonSet, ... controllers), built from the
// k8s.io/kubernetes module for the test world.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
