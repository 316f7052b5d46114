package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Program is one image: a Go main package, where its binary goes in the
// image, and the name the manifests of config/ give its image.
type Program struct {
	// Name is the image's name under the registry prefix: inplace.
	Name string
	// Package is the main package to build, as `go build` takes it.
	Package string
	// Path is the binary's absolute path in the image; the entrypoint.
	Path string
	// Tag is the tag pushed beside the digest.
	Tag string
	// LDFlags are added to -s -w.
	LDFlags []string
	// Manifest is the image name config/ refers to (kustomize's images: name).
	Manifest string
}

// VersionVar is the variable `inplace version` prints, set with -X.
const VersionVar = "github.com/inplace-dev/inplace/cmd/inplace/cli.version"

// NATSModule is the module of the nats-server program.
const NATSModule = "github.com/nats-io/nats-server/v2"

// Inplace is the program of the project's image, stamped with version.
func Inplace(version string) Program {
	return Program{Name: "inplace", Package: "./cmd/inplace", Path: "/inplace", Tag: version,
		LDFlags: []string{"-X", VersionVar + "=" + version}, Manifest: "ghcr.io/inplace-dev/inplace"}
}

// NATSServer is the program of the nats-server image config/nats runs, at
// natsVersion, the version go.mod requires ("v2.15.2"; its tag drops the v).
func NATSServer(natsVersion string) Program {
	return Program{Name: "nats-server", Package: NATSModule, Path: "/usr/local/bin/nats-server",
		Tag: strings.TrimPrefix(natsVersion, "v"), Manifest: "nats"}
}

// ModuleVersion is the version of module the main module in dir requires.
func ModuleVersion(ctx context.Context, goCmd, dir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, goCmd, "list", "-m", "-f", "{{.Version}}", module)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("version of %s: %w%s", module, err, stderrOf(err))
	}
	return strings.TrimSpace(string(out)), nil
}

// goArch is GOARCH (and GOARM) for a platform; only linux is built.
func goArch(p v1.Platform) (arch, arm string, err error) {
	switch {
	case p.OS != "linux":
		return "", "", fmt.Errorf("platform %s: only linux images are built", p)
	case p.Architecture == "amd64" && p.Variant == "":
		return "amd64", "", nil
	case p.Architecture == "arm64" && (p.Variant == "" || p.Variant == "v8"):
		return "arm64", "", nil
	case p.Architecture == "arm" && (p.Variant == "v6" || p.Variant == "v7"):
		return "arm", strings.TrimPrefix(p.Variant, "v"), nil
	}
	return "", "", fmt.Errorf("platform %s: want linux/amd64, linux/arm64, linux/arm/v6 or linux/arm/v7", p)
}

// compile builds prog for p into dir and returns the binary's path.
func compile(ctx context.Context, o Options, prog Program, p v1.Platform, dir string) (string, error) {
	arch, arm, err := goArch(p)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, prog.Name+"-"+strings.ReplaceAll(p.String(), "/", "-"))
	ldflags := strings.Join(append([]string{"-s", "-w"}, prog.LDFlags...), " ")
	cmd := exec.CommandContext(ctx, o.Go, "build", "-trimpath", "-ldflags", ldflags, "-o", out, prog.Package)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOARM="+arm, "GOFLAGS="+os.Getenv("GOFLAGS"))
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s for %s: %w\n%s", prog.Package, p, err, b)
	}
	return out, nil
}

// stderrOf is the stderr an exec error carries, for messages.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
