// Command inplace-image builds the project's images without Docker and
// pushes them: `make image REGISTRY=registry.example/you` runs it. See
// package image and docs/install.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/inplace-dev/inplace/cmd/inplace-image/image"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "inplace-image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inplace-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	registry := fs.String("registry", os.Getenv("REGISTRY"), "where to push: a registry and path prefix, e.g. 127.0.0.1:5000/inplace (env REGISTRY)")
	version := fs.String("version", os.Getenv("VERSION"), "the inplace image's tag and version (env VERSION; default git describe)")
	platforms := fs.String("platforms", envOr("PLATFORMS", "linux/amd64,linux/arm64"), "platforms to build (env PLATFORMS)")
	nats := fs.Bool("nats", true, "build the nats-server image of config/nats too")
	ca := fs.String("ca-bundle", "", "CA bundle to put in the base (default: this machine's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: the flags are -registry, -version, -platforms, -nats, -ca-bundle", fs.Args())
	}
	ps, err := image.ParsePlatforms(*platforms)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	commit := image.GitCommit(ctx, dir)
	if *version == "" {
		*version = commit.Describe
	}
	progs := []image.Program{image.Inplace(*version)}
	if *nats {
		v, err := image.ModuleVersion(ctx, "go", dir, image.NATSModule)
		if err != nil {
			return err
		}
		progs = append(progs, image.NATSServer(v))
	}
	start := time.Now()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	rs, err := image.Build(ctx, image.Options{Registry: *registry, Programs: progs, Platforms: ps, Dir: dir,
		CABundle: *ca, Revision: commit.Revision, Created: commit.Time, Log: log})
	if err != nil {
		return err
	}
	for _, r := range rs {
		fmt.Fprintf(stdout, "pushed %s\n  tag %s, platforms %v, compressed sizes %v bytes\n", r.Digest, r.Tag, r.Platforms, r.Sizes)
	}
	fmt.Fprintf(stdout, "in %s. For your kustomization (docs/install.md):\n\n%s", time.Since(start).Round(time.Second), image.Kustomize(rs))
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
