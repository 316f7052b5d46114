package knative_test

import (
	"testing"

	"github.com/inplace-dev/inplace/test/knative"
	"github.com/inplace-dev/inplace/test/world"
)

// One world and one Knative node for the test binary: the in-memory
// channel dispatcher takes :8080 and :8443, so the Knative tests have a
// package of their own.
func TestMain(m *testing.M) { knative.Main(m, world.Options{}) }
