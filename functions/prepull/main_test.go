package prepull_test

import (
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/world"
)

// Pulls cost 100ms per MiB here, so a test can make a pull slow with the
// image's size; the default 2KB images still pull at once.
func TestMain(m *testing.M) {
	t := kubelet.FastTimings()
	t.PullPerMB = 100 * time.Millisecond
	world.Main(m, world.Options{KubeletOptions: kubelet.Options{Timings: &t}})
}

// newFunction is pre-pull on client with the pre-pull namespace ns.
func newFunction(client kubernetes.Interface, ns string, edit func(*config.Defaults)) *prepull.Function {
	d := config.StandardDefaults()
	d.PrepullNamespace = ns
	if edit != nil {
		edit(&d)
	}
	return prepull.New(prepull.Deps{Client: client, Config: config.NewStore(d, slog.New(slog.DiscardHandler)),
		Recheck: 100 * time.Millisecond})
}
