// Package registry runs a real OCI registry for the test world: CNCF
// Distribution v3 (github.com/distribution/distribution/v3) served in process
// on a free 127.0.0.1 port, with in-memory storage, no auth, and deletes
// enabled.
//
// It sits at the start of the chain: Push, Tag and Delete change what the
// registry holds (with real images built by go-containerregistry), and
// Distribution's own notifications machinery posts real webhook events
// (envelope media type application/vnd.docker.distribution.events.v2+json)
// to the URL set in Options.Notify or later with SetNotify. Resolve is what a
// simulated node's image pull does, so the simulated kubelet's imageIDs are
// real digests and a missing tag fails to pull.
//
// A runnable registry (Options.Runnable, for a world of real nodes) makes
// Push build program images of test/images instead of random layers: the
// app with the tag as its version (the sidecar for a sidecar's
// repository, or the program WithProgram names), its crash switch on for
// WithCrash, WithEnv's settings after, and a fresh random padding of the
// push's size, so every push still has a new digest and the tests push as
// they do on simulated nodes. PushImage pushes an image the caller built.
//
// It must not fake any of this: no hand-written events, no mocked registry.
// It is test support only and is never imported by production code.
//
// Distribution logs through the process-wide logrus standard logger; Start
// routes those logs to the slog logger of the registry started last (see
// Options.Logger) and silences logrus' own output.
package registry
