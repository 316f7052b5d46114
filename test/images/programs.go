package images

import (
	"context"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/inplace-dev/inplace/test/images/settings"
)

// Program names a program under test/images/cmd that Image builds.
type Program string

// The programs.
const (
	// PauseProgram is a pod sandbox's pause container: it sleeps until
	// SIGTERM or SIGINT, reaps children, and exits 0.
	PauseProgram Program = "pause"
	// AppProgram is the application: an HTTP server on :8080 answering
	// its version (settings.Server, APP_* variables).
	AppProgram Program = "app"
	// SidecarProgram is the same server on :9090 (SIDECAR_* variables).
	SidecarProgram Program = "sidecar"
	// InitProgram sleeps and exits (settings.Init).
	InitProgram Program = "init"
	// ProbeProgram is the traffic probe (settings.Probe, test/traffic).
	ProbeProgram Program = "probe"
)

// Programs lists every program.
var Programs = []Program{PauseProgram, AppProgram, SidecarProgram, InitProgram, ProbeProgram}

func (p Program) valid() bool {
	for _, q := range Programs {
		if p == q {
			return true
		}
	}
	return false
}

// Pause is the pause image: the pause program alone, one layer, no
// padding, the image a node's sandbox_image names.
func Pause(ctx context.Context) (v1.Image, error) {
	return Image(ctx, PauseProgram, Options{})
}

// App is an image of the app whose config sets s (its version, delays,
// crash switch, error share), with DefaultPadding seeded by the settings,
// so two images of the same settings are the same image.
func App(ctx context.Context, s settings.Server) (v1.Image, error) {
	env := s.Env(settings.AppPrefix)
	return Image(ctx, AppProgram, Options{Env: env, Padding: DefaultPadding, Seed: seed(AppProgram, env)})
}

// Sidecar is an image of the sidecar whose config sets s.
func Sidecar(ctx context.Context, s settings.Server) (v1.Image, error) {
	env := s.Env(settings.SidecarPrefix)
	return Image(ctx, SidecarProgram, Options{Env: env, Padding: DefaultPadding, Seed: seed(SidecarProgram, env)})
}

// Init is an image of the init program whose config sets s.
func Init(ctx context.Context, s settings.Init) (v1.Image, error) {
	env := s.Env()
	return Image(ctx, InitProgram, Options{Env: env, Padding: DefaultPadding, Seed: seed(InitProgram, env)})
}

// Probe is the traffic probe's image; its URL and rate come from the pod's
// env (test/traffic sets them), so it has no padding.
func Probe(ctx context.Context) (v1.Image, error) {
	return Image(ctx, ProbeProgram, Options{})
}

func seed(p Program, env []string) string {
	return string(p) + "\n" + strings.Join(env, "\n")
}
