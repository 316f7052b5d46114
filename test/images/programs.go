package images

import (
	"context"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Program names a program under test/images/cmd that Image builds.
type Program string

// The programs.
const (
	// PauseProgram is a pod sandbox's pause container: it sleeps until
	// SIGTERM or SIGINT, reaps children, and exits 0.
	PauseProgram Program = "pause"
)

// Programs lists every program.
var Programs = []Program{PauseProgram}

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
