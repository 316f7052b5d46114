package cli

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/config"
)

// newNATSCmd groups what sets up a secured NATS for inplace.
func newNATSCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nats",
		Short: "Identities and setup of the NATS server inplace uses",
	}
	cmd.AddCommand(newNATSCredentialsCmd(), newNATSSetupCmd())
	return cmd
}

func newNATSCredentialsCmd() *cobra.Command {
	var serverConfig bool
	cmd := &cobra.Command{
		Use:   "credentials DIR",
		Short: "Make an nkey identity per function in DIR (kept when present) and print how to use them",
		Long: `credentials writes DIR/<identity>.nk, an nkey seed for each of compute-spec,
pre-pull, patch-pod, verify, receiver, pod-watcher, poller, approver and operator (seeds
already there are kept), and DIR/identities.env, their public keys as
INPLACE_NKEY_<IDENTITY>=U… lines for the NATS server (config/nats reads
them from the Secret nats-inplace-identities).

Each function connects as its own identity (--nats-credentials DIR): it may
publish only its outputs, consume only its own consumer, and read (or, for
compute-spec, write) the rollout records; the operator sets up the stream,
consumers and buckets ('inplace nats setup') and serves the command line
tools. --server-config prints the nats-server accounts block of those
identities, their keys filled in, for a NATS you configure yourself.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			keys, err := busauth.Ensure(dir)
			if err != nil {
				return err
			}
			if err := writeIdentities(dir, keys); err != nil {
				return err
			}
			if serverConfig {
				_, err := fmt.Fprint(cmd.OutOrStdout(), busauth.ServerConfig(bus.DefaultConfig(), keys))
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "identities in %s:\n", dir)
			names := make([]string, 0, len(keys))
			for n := range keys {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(out, "  %-13s %s\n", n, keys[n])
			}
			fmt.Fprintf(out, "\nkubectl -n inplace-system create secret generic inplace-nats-credentials --from-file=%s\n", dir)
			fmt.Fprintf(out, "kubectl -n inplace-system create secret generic nats-inplace-identities --from-env-file=%s\n",
				filepath.Join(dir, "identities.env"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&serverConfig, "server-config", false, "print the nats-server accounts block with the keys filled in")
	return cmd
}

// writeIdentities writes DIR/identities.env: the public keys, one
// INPLACE_NKEY_<IDENTITY>= line each.
func writeIdentities(dir string, keys map[string]string) error {
	var b strings.Builder
	for _, r := range busauth.Roles() {
		fmt.Fprintf(&b, "%s=%s\n", busauth.KeyVar(r.Name), keys[r.Name])
	}
	path := filepath.Join(dir, "identities.env")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func newNATSSetupCmd() *cobra.Command {
	var p config.Process
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Set up the stream, the consumers and the buckets, as the operator",
		Long: `setup connects to --nats-url as the operator identity (--nats-credentials
DIR holding operator.nk or operator.creds) and creates or updates the
stream, the durable consumer of every function and the KV buckets, which
the functions' own identities may not do. It reads the same settings as
'inplace run' (INPLACE_REPLICAS, INPLACE_ACK_WAIT, ...). Run it before the
functions start, and after an upgrade of inplace.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := p.Validate(); err != nil {
				return err
			}
			if err := app.Setup(cmd.Context(), &p, slog.New(slog.DiscardHandler)); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "stream %s, %d consumers and the buckets are set up on %s\n",
				p.Bus.Stream, len(app.Consumers), p.NATSURL)
			return err
		},
	}
	if err := bindSome(cmd.Flags(), &p, setupFlags); err != nil {
		cmd.RunE = func(*cobra.Command, []string) error { return err }
	}
	return cmd
}

// setupFlags are the settings of 'inplace run' that 'nats setup' reads: the
// connection and what the stream, consumers and buckets are made with.
var setupFlags = []string{"nats-url", "nats-credentials", "nats-tls-ca", "nats-tls-cert", "nats-tls-key",
	"stream", "replicas", "ack-wait", "pinned-ttl", "retention", "retry-backoff", "retry-limit"}

// bindSome binds the process settings as 'inplace run' does (defaults from
// INPLACE_* included) and shows only the named flags; the others keep
// their defaults.
func bindSome(fs *pflag.FlagSet, p *config.Process, names []string) error {
	all := pflag.NewFlagSet("run", pflag.ContinueOnError)
	err := config.BindFlags(all, p)
	for _, n := range names {
		fs.AddFlag(all.Lookup(n))
	}
	return err
}
