// Command app is the test world's application: an HTTP server answering
// every request with its version, with a readiness endpoint, start and
// stop delays, a crash switch, an error share and Prometheus metrics, all
// set by APP_* environment variables (see test/images/settings and
// test/images/serve). It listens on :8080 unless APP_LISTEN says
// otherwise.
package main

import (
	"os"

	"github.com/inplace-dev/inplace/test/images/serve"
	"github.com/inplace-dev/inplace/test/images/settings"
)

func main() { os.Exit(serve.Main(settings.AppPrefix, settings.DefaultApp)) }
