package app

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/config"
)

// With the embedded server, the process's connections to it (the
// operator's and each identity's) are in process, and each identity is
// still only itself there: verify's connection is refused an image.pushed.
func TestEmbeddedLinksAreInProcessAndConfined(t *testing.T) {
	var p config.Process
	if err := config.BindFlags(pflag.NewFlagSet("run", pflag.ContinueOnError), &p); err != nil {
		t.Fatal(err)
	}
	p.Functions, p.WatchPods = []string{busauth.Receiver, busauth.Verify}, false
	p.NATSListen, p.NATSDataDir = "127.0.0.1:-1", filepath.Join(t.TempDir(), "nats")
	l, err := connect(t.Context(), &p, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.shutdown)
	if len(l.own) != 2 || l.admin == l.own[busauth.Verify] {
		t.Fatalf("connected as %d identities besides the operator, want receiver and verify", len(l.own))
	}
	links := map[string]string{busauth.Operator: l.admin.JetStream().Conn().ConnectedAddr()}
	for id, b := range l.own {
		links[id] = b.JetStream().Conn().ConnectedAddr()
	}
	for id, addr := range links {
		if addr != "pipe" {
			t.Errorf("%s is connected at %s, want in process", id, addr)
		}
	}

	nc := l.bus(busauth.Verify).JetStream().Conn()
	subject := p.Bus.Subject(events.ImagePushed)
	if err := nc.Publish(subject, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := nc.LastError(); err == nil || !strings.Contains(err.Error(), `Permissions Violation for Publish to "`+subject+`"`) {
		t.Errorf("verify published %s in process: last error %v, want a permissions violation", subject, err)
	}
}
