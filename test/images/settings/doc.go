// Package settings is the one place that names the environment variables
// the test programs (test/images/cmd) read, parses them into typed
// settings at start (failing on a bad value with the variable named), and
// formats settings back into env entries for an image config or a pod
// spec. An image's config carries its settings (so a pushed tag carries
// its version and behaviour); a pod's env overrides them.
//
// It imports only the standard library: every program links it.
package settings
