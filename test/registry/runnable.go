package registry

import (
	"context"
	"crypto/rand"
	"fmt"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/inplace-dev/inplace/test/images"
	"github.com/inplace-dev/inplace/test/images/settings"
)

// runnableImage is what a push of repo:tag makes on a runnable registry:
// a program image of test/images that a real node runs, in place of the
// random layers a simulated node needs no more than the digest of.
//
//   - The program is WithProgram's, else the sidecar for a repository
//     whose last element is "side" or "sidecar" or ends in "-sidecar" (it
//     listens on :9090, so it shares a pod with the app), else the app.
//   - The app and the sidecar get the tag as their version, and their
//     crash switch when the push carries CrashLabel (WithCrash): the
//     container exits 1 at once and the kubelet crash-loops it.
//   - WithEnv's entries follow, so they override those.
//   - The labels stay (Resolve still reports Crash).
//   - A padding of the push's size (WithSize, WithLayers; DefaultPadding
//     of test/images when no size was given) of fresh random bytes, so
//     every push has a new digest and a node pulls something new.
func runnableImage(ctx context.Context, c pushConfig, repo, tag string) (v1.Image, error) {
	p := c.program
	if p == "" {
		p = programFor(repo)
	}
	var env []string
	crash := c.labels[CrashLabel] == "true"
	switch p {
	case images.AppProgram:
		env = settings.Server{Version: tag, Crash: crash}.Env(settings.AppPrefix)
	case images.SidecarProgram:
		env = settings.Server{Version: tag, Crash: crash}.Env(settings.SidecarPrefix)
	}
	size := c.size
	if !c.sizeSet {
		size = images.DefaultPadding
	}
	img, err := images.Image(ctx, p, images.Options{
		Env: append(env, c.env...), Labels: c.labels, Padding: size, Layers: c.layers, Seed: rand.Text(), OCI: c.oci,
	})
	if err != nil {
		return nil, fmt.Errorf("runnable image: %w", err)
	}
	return img, nil
}

// programFor is the program a push to repo runs unless WithProgram says.
func programFor(repo string) images.Program {
	last := path.Base(repo)
	if last == "side" || last == "sidecar" || strings.HasSuffix(last, "-sidecar") {
		return images.SidecarProgram
	}
	return images.AppProgram
}
