package computespec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/inputs/poll"
)

// ImageDater reads when an image was made, as its registry says, with the
// given pull secrets (poll.Dater); poll.ErrNoImage when the registry does
// not have it.
type ImageDater interface {
	Created(ctx context.Context, image string, pullSecrets []string) (time.Time, error)
}

// maxDates bounds the creation times remembered.
const maxDates = 1024

// dateCache remembers creation times by image digest: a digest's never
// changes.
type dateCache struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (c *dateCache) get(image string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[image]
	return t, ok
}

func (c *dateCache) put(image string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxDates {
		c.m = map[string]time.Time{}
	}
	c.m[image] = t
}

// dates reads what rollout.Backwards needs to judge a push without a time
// of a digest the workload never ran: when the registry says the pushed
// image and the one the workload last rolled out (h) were created, read
// with the pull secrets of the workload's pods. Nil when the push needs no
// dating, or nothing can date it (no dater). A pushed digest the registry
// does not have is refused: it cannot be dated, nor pulled.
func (f *Function) dates(ctx context.Context, t controller.Target, h rollout.History, push events.ImagePushedData) (rollout.Dates, error) {
	if f.d.Dates == nil || !rollout.Undated(h, push) {
		return nil, nil
	}
	secrets, err := f.pullSecrets(t)
	if err != nil {
		return nil, err
	}
	out := rollout.Dates{}
	for i, digest := range []string{push.Digest, h.Digest} {
		image := push.Name() + "@" + digest
		c, err := f.created(ctx, image, secrets)
		switch {
		case errors.Is(err, poll.ErrNoImage) && i == 0:
			return nil, fmt.Errorf("%w: %s carries no push time, and its registry has no such image to date it by", errBackwards, push.Ref())
		case errors.Is(err, poll.ErrNoImage):
			// The image rolled out last is gone: the push is judged on what it has.
		case err != nil:
			return nil, wrap("date "+image, err)
		}
		out[digest] = c
	}
	return out, nil
}

// created is image's creation time, from the cache or the registry.
func (f *Function) created(ctx context.Context, image string, secrets []string) (time.Time, error) {
	if c, ok := f.dated.get(image); ok {
		return c, nil
	}
	c, err := f.d.Dates.Created(ctx, image, secrets)
	if err != nil {
		return time.Time{}, err
	}
	f.dated.put(image, c)
	return c, nil
}

// pullSecrets are the imagePullSecrets ("namespace/name") of t's first pod.
func (f *Function) pullSecrets(t controller.Target) ([]string, error) {
	pods, err := f.d.Cache.PodsOf(t.Workload.Ref)
	if err != nil {
		return nil, wrap("pods of "+t.Workload.Ref.String(), err)
	}
	var secrets []string
	if len(pods) > 0 {
		for _, s := range pods[0].Spec.ImagePullSecrets {
			secrets = append(secrets, pods[0].Namespace+"/"+s.Name)
		}
	}
	return secrets, nil
}
