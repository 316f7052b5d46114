// Package images builds the test world's container images from programs
// of this module: small static Go programs under test/images/cmd, each
// compiled with CGO_ENABLED=0, -trimpath and -ldflags '-s -w' for
// linux/amd64 and put in a one-layer image with go-containerregistry
// (entrypoint /<program>, platform linux/amd64, Docker or OCI media
// types), so a real node (containerd + runc) can run them.
//
//	img, err := images.Pause(ctx)                                     // the sandbox image
//	img, err := images.App(ctx, settings.Server{Version: "1.0.1"})    // the app, version 1.0.1
//	digest, err := reg.PushImage(ctx, ns+"/web", "1.0.1", img)        // test/registry
//
// The programs (see each command's doc and test/images/settings for their
// variables):
//   - pause: sleeps until SIGTERM or SIGINT, reaps orphans, exits 0.
//   - app: an HTTP server on :8080 answering every request with its
//     version (body and X-Version header); /readyz after a start delay;
//     on SIGTERM it drains for a stop delay, then exits 0; a crash switch
//     (exit 1 at once); a share of requests answered 500 while Ready;
//     /metrics in the Prometheus text format (test/images/serve).
//   - sidecar: the same server on :9090 with SIDECAR_* variables.
//   - init: sleeps, then exits with a given code.
//   - probe: the traffic probe (test/traffic).
//
// The settings are env entries in the image config, so a pushed tag
// carries its version and behaviour; a pod's env overrides them. The app,
// sidecar and init images carry a padding layer of DefaultPadding
// incompressible bytes seeded by their settings, so a pull of a new
// version costs something measurable while the same settings give the
// same image. Image builds any program with Options (env, labels,
// padding size, seed, layers, media types).
//
// Binaries are built once per hash of their sources (the toolchain, the
// flags, this module's files the program compiles, and the versions of
// its other dependencies): within a process at most once, and across
// processes through a cache in bin/images at the module's root, written to
// a temporary file and renamed, so concurrent test binaries share it
// safely. Building needs the go command on PATH, as go test has.
//
// The package is test support: production code must not import it, and
// it must not push anything itself (the caller pushes, so the registry
// package can build on it).
package images
