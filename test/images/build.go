package images

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// pkgPrefix is the import path under which the programs live.
const pkgPrefix = "github.com/inplace-dev/inplace/test/images/cmd/"

// buildEnv and buildFlags make a static, stripped linux/amd64 binary
// whose bytes depend only on its sources and the Go toolchain.
var (
	buildEnv   = []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64"}
	buildFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w"}
)

// binaries memoises Binary per program within this process.
var binaries sync.Map // Program → func() (binary, error)

// binary is a built program: its path in the cache and the hash of its
// sources.
type binary struct {
	path, hash string
}

// Binary returns the path of p's static binary, building it once per
// source hash: within a process it is built at most once, and a binary
// another process already put in the cache is reused.
func Binary(ctx context.Context, p Program) (string, error) {
	b, err := build(ctx, p)
	return b.path, err
}

func build(ctx context.Context, p Program) (binary, error) {
	if !p.valid() {
		return binary{}, fmt.Errorf("build %q: unknown program", p)
	}
	f, _ := binaries.LoadOrStore(p, sync.OnceValues(func() (binary, error) {
		// The build must finish even if the first caller's ctx ends, as
		// later callers share its result.
		return buildUncached(context.WithoutCancel(ctx), p, "")
	}))
	b, err := f.(func() (binary, error))()
	if err != nil {
		return binary{}, fmt.Errorf("build %s: %w", p, err)
	}
	return b, nil
}

// buildUncached builds p into cacheDir unless a binary of the same
// sources is there; an empty cacheDir is bin/images in the module's root.
func buildUncached(ctx context.Context, p Program, cacheDir string) (binary, error) {
	pkgs, err := listDeps(ctx, pkgPrefix+string(p))
	if err != nil {
		return binary{}, err
	}
	hash, root, err := sourceHash(ctx, pkgs)
	if err != nil {
		return binary{}, err
	}
	dir := cacheDir
	if dir == "" {
		dir = filepath.Join(root, "bin", "images")
	}
	path := filepath.Join(dir, string(p)+"-"+hash[:16])
	if _, err := os.Stat(path); err == nil {
		return binary{path: path, hash: hash}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return binary{}, fmt.Errorf("cache: %w", err)
	}
	if err := goBuild(ctx, pkgPrefix+string(p), dir, path); err != nil {
		return binary{}, err
	}
	prune(dir, string(p)+"-", path)
	return binary{path: path, hash: hash}, nil
}

// staleAfter is the age after which prune removes a binary of other
// sources (or a temporary file left by a killed build): no test binary
// still uses it by then.
const staleAfter = time.Hour

// prune removes files in dir older than staleAfter that start with prefix
// (other builds of the same program) or are temporary, except keep.
func prune(dir, prefix, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if path == keep || !(strings.HasPrefix(e.Name(), prefix) || strings.HasPrefix(e.Name(), ".build-")) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAfter {
			_ = os.Remove(path)
		}
	}
}

// goBuild compiles pkg into a temporary file in dir and renames it to
// path, so concurrent builders never see a partial binary.
func goBuild(ctx context.Context, pkg, dir, path string) error {
	tmp, err := os.CreateTemp(dir, ".build-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	_ = tmp.Close()
	defer os.Remove(tmp.Name())
	args := append([]string{"build", "-o", tmp.Name()}, buildFlags...)
	if _, err := goCmd(ctx, buildEnv, append(args, pkg)...); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// listedPackage is what go list says about one package of a build.
type listedPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	GoFiles    []string
	EmbedFiles []string
	Module     *struct {
		Path, Version, Dir string
		Main               bool
	}
}

// listDeps lists pkg and every package it imports, for the build's
// platform.
func listDeps(ctx context.Context, pkg string) ([]listedPackage, error) {
	out, err := goCmd(ctx, buildEnv, "list", "-deps", "-json=ImportPath,Dir,Standard,GoFiles,EmbedFiles,Module", pkg)
	if err != nil {
		return nil, err
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var lp listedPackage
		if err := dec.Decode(&lp); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list %s: %w", pkg, err)
		}
		pkgs = append(pkgs, lp)
	}
}

// sourceHash hashes what the binary is made of: the toolchain and flags,
// the files of this module's packages, and the module path and version of
// every other dependency (the module cache never changes a version's
// files). It also returns the main module's directory.
func sourceHash(ctx context.Context, pkgs []listedPackage) (string, string, error) {
	goVersion, err := goCmd(ctx, nil, "env", "GOVERSION")
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n%q\n", bytes.TrimSpace(goVersion), buildEnv, buildFlags)
	root := ""
	for _, p := range pkgs {
		switch {
		case p.Standard:
			continue
		case p.Module == nil:
			return "", "", fmt.Errorf("hash sources: package %s has no module", p.ImportPath)
		case !p.Module.Main:
			fmt.Fprintf(h, "dep %s %s@%s\n", p.ImportPath, p.Module.Path, p.Module.Version)
			continue
		}
		root = p.Module.Dir
		if err := hashFiles(h, p); err != nil {
			return "", "", err
		}
	}
	if root == "" {
		return "", "", errors.New("hash sources: no package of the main module")
	}
	return hex.EncodeToString(h.Sum(nil)), root, nil
}

func hashFiles(h io.Writer, p listedPackage) error {
	fmt.Fprintf(h, "pkg %s\n", p.ImportPath)
	for _, f := range append(append([]string(nil), p.GoFiles...), p.EmbedFiles...) {
		b, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil {
			return fmt.Errorf("hash sources: %w", err)
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "file %s %x\n", f, sum)
	}
	return nil
}

// goCmd runs the go command with env added to the process's environment
// and returns its standard output.
func goCmd(ctx context.Context, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}
