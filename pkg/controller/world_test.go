package controller_test

import (
	"testing"

	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// env is one test's compute-spec and rollout controller over the shared
// world (controllertest.Env), with this package's helpers.
type env struct{ *controllertest.Env }

func newEnv(t *testing.T) *env { return &env{controllertest.New(t)} }
