// Command render renders kustomizations with the kustomize library (what
// `kubectl kustomize` runs), so rendering needs no binary: with -out it
// writes <out>/<name>.yaml for each directory (the name is the path below
// config/overlays, or the path with / as -), else it prints to stdout.
//
//	go run ./test/manifests/render -out dist/manifests config/overlays/*
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/inplace-dev/inplace/test/manifests"
)

func main() {
	out := flag.String("out", "", "directory to write <name>.yaml into; empty prints to stdout")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: render [-out dir] kustomization-dir...")
		os.Exit(2)
	}
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(out string, dirs []string) error {
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	for _, dir := range dirs {
		y, err := manifests.Render(dir)
		if err != nil {
			return err
		}
		if out == "" {
			fmt.Printf("# kustomize %s\n---\n%s", dir, y)
			continue
		}
		path := filepath.Join(out, name(dir)+".yaml")
		if err := os.WriteFile(path, y, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s -> %s\n", dir, path)
	}
	return nil
}

// name is "knative" for config/overlays/knative, "config-rbac" for config/rbac.
func name(dir string) string {
	clean := filepath.ToSlash(filepath.Clean(dir))
	if i := strings.Index(clean, "overlays/"); i >= 0 {
		clean = clean[i+len("overlays/"):]
	}
	return strings.ReplaceAll(clean, "/", "-")
}
