package e2e_test

import "github.com/inplace-dev/inplace/test/registry"

type registryOpt = registry.PushOption
