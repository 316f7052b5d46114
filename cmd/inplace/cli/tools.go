package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

// toolCommands are the operator's tools: events (tail, export, import),
// trace and status. They read the stream and the rollout bucket of a
// running `inplace run` and never change their configuration.
func toolCommands() []*cobra.Command {
	events := &cobra.Command{
		Use:   "events",
		Short: "Tail, export and import the CloudEvents on the stream",
	}
	events.AddCommand(newTailCmd(), newExportCmd(), newImportCmd())
	return append([]*cobra.Command{events, newTraceCmd(), newStatusCmd(), newReplayCmd(), newUpgradeCmd(), newUndoCmd(), newRestartCmd(), newResizeCmd(), newFleetCmd()}, newDecideCmds()...)
}

// defaultToolsURL is where the embedded server of `inplace run` listens.
const defaultToolsURL = "nats://127.0.0.1:4222"

// defaultToolsCredentials is where `inplace run` keeps the identities of
// its embedded server (--nats-data-dir/credentials).
const defaultToolsCredentials = ".inplace/nats/credentials"

// natsFlags are the connection flags every tool shares.
type natsFlags struct {
	url         string
	stream      string
	credentials string
	tlsCA       string
	// identity is who the tool connects as: the operator unless set (and
	// present in the credentials directory).
	identity string
}

// bind registers --nats-url and --stream.
func (f *natsFlags) bind(fs *pflag.FlagSet) {
	f.bindURL(fs)
	stream := os.Getenv("INPLACE_STREAM")
	if stream == "" {
		stream = bus.DefaultConfig().Stream
	}
	fs.StringVar(&f.stream, "stream", stream, "JetStream stream name (env INPLACE_STREAM)")
}

// bindURL registers --nats-url alone, for a tool that does not read the stream.
func (f *natsFlags) bindURL(fs *pflag.FlagSet) {
	url := os.Getenv("INPLACE_NATS_URL")
	if url == "" {
		url = defaultToolsURL
	}
	fs.StringVar(&f.url, "nats-url", url, "NATS server holding the stream (env INPLACE_NATS_URL)")
	creds := os.Getenv("INPLACE_NATS_CREDENTIALS")
	if _, err := os.Stat(defaultToolsCredentials); creds == "" && err == nil {
		creds = defaultToolsCredentials
	}
	fs.StringVar(&f.credentials, "nats-credentials", creds,
		"directory of NATS identities; the tools connect as its operator (operator.nk or operator.creds) (env INPLACE_NATS_CREDENTIALS)")
	fs.StringVar(&f.tlsCA, "nats-tls-ca", os.Getenv("INPLACE_NATS_TLS_CA"), "CA certificate of the NATS server (env INPLACE_NATS_TLS_CA)")
}

// toolConn is a tool's connection to NATS.
type toolConn struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func (f *natsFlags) connect() (*toolConn, error) {
	opts := []nats.Option{nats.Name("inplace-tools"), nats.Timeout(5 * time.Second)}
	if f.credentials != "" {
		own, err := busauth.Dial(f.credentials, f.as())
		if err != nil {
			return nil, fmt.Errorf("--nats-credentials: %w", err)
		}
		opts = append(opts, own...)
	}
	if f.tlsCA != "" {
		opts = append(opts, nats.RootCAs(f.tlsCA))
	}
	nc, err := nats.Connect(f.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", f.url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream on %s: %w", f.url, err)
	}
	return &toolConn{nc: nc, js: js}, nil
}

// as is the identity to connect as: f.identity when the credentials
// directory holds it, else the operator.
func (f *natsFlags) as() string {
	if f.identity != "" && f.credentials != "" {
		for _, ext := range []string{".nk", ".creds"} {
			if _, err := os.Stat(filepath.Join(f.credentials, f.identity+ext)); err == nil {
				return f.identity
			}
		}
	}
	return busauth.Operator
}

// openStream connects and opens the stream; close the connection when done.
func (f *natsFlags) openStream(ctx context.Context) (*toolConn, *history.Stream, error) {
	return f.open(ctx, false)
}

// open connects and opens the stream, creating it as `inplace run` would
// when create is set and it is missing; an existing stream is never changed.
func (f *natsFlags) open(ctx context.Context, create bool) (*toolConn, *history.Stream, error) {
	c, err := f.connect()
	if err != nil {
		return nil, nil, err
	}
	s, err := history.Open(ctx, c.js, f.stream)
	if create && errors.Is(err, jetstream.ErrStreamNotFound) {
		cfg := bus.DefaultConfig()
		cfg.Stream = f.stream
		if _, err = bus.Connect(ctx, c.nc, cfg, slog.New(slog.DiscardHandler)); err == nil {
			s, err = history.Open(ctx, c.js, f.stream)
		}
	}
	if err != nil {
		c.nc.Close()
		return nil, nil, fmt.Errorf("%s: %w", f.url, err)
	}
	return c, s, nil
}

// typesFlag parses --type values (repeated or comma-separated).
func parseTypes(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		t, err := history.ParseType(v)
		if err != nil {
			return nil, fmt.Errorf("--type: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}
