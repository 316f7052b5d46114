// Package poll is the registry poller: a fallback for registries that
// cannot send webhooks and for deliveries that get lost. For every
// opted-in workload with a poll interval (inplace.dev/poll-interval, or
// config-inplace's poll-interval) it asks the registry what the tags the
// workload could move to point at — a HEAD on the manifest of the running
// tag (which registries such as Docker Hub do not count as a pull), or,
// for a semver policy, the tag list and a HEAD on the newest version the
// policy allows — with jitter, and with back-off when a registry answers
// 429 (its Retry-After honoured). Credentials come from the pods'
// imagePullSecrets.
//
// A digest it has not announced yet becomes the image.pushed a webhook
// would have made, with the same event id (events.PushID: repository, tag
// and digest), so the stream's dedup window makes a webhook and a poll of
// one push one event. It sits where the receiver sits: it announces, it
// never decides. compute-spec re-derives everything from the cluster and
// the rollout record, so an announcement repeated after a restart changes
// nothing.
//
// Its Dater serves compute-spec: it reads an image's creation time from the
// registry with the same pull-secret keychain, to date a push that carries
// no time (such as the poller's own) before the never-backwards check.
package poll
