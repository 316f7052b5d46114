// Command kubectl is the real kubectl, built from the k8s.io/kubectl module
// as k8s.io/kubernetes/cmd/kubectl builds it, so the tests drive inplace as
// a kubectl plugin (kubectl inplace ...) through kubectl's own plugin
// discovery, not through whatever kubectl the machine may have.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Import to initialize client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
