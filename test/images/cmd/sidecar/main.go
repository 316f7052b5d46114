// Command sidecar stands in for a pod's sidecar (a mesh proxy, a log
// shipper): the app's server on :9090 with SIDECAR_* variables, so it has
// a version, a start delay and a readiness endpoint of its own and does
// not compete with the app for its port.
package main

import (
	"os"

	"github.com/inplace-dev/inplace/test/images/serve"
	"github.com/inplace-dev/inplace/test/images/settings"
)

func main() { os.Exit(serve.Main(settings.SidecarPrefix, settings.DefaultSidecar)) }
