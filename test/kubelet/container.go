package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// host is what a container's lifecycle needs from its node.
type host interface {
	resolve(ctx context.Context, ref string) (Image, error)
	images() *imageCache
	record(ref *corev1.ObjectReference, eventtype, reason, message string)
	newContainerID() string
}

// syncer advances one pod's containers to now.
type syncer struct {
	ctx context.Context
	h   host
	t   Timings
	pod *corev1.Pod
	now time.Time
}

// step advances container c towards spec and returns when it next needs
// attention (zero: only when the pod changes).
func (s *syncer) step(c *ctr, spec *corev1.Container) time.Time {
	if c.op == opKill {
		if s.now.Before(c.opUntil) {
			return c.opUntil
		}
		c.finish(c.opUntil, 0, "Completed", true)
	}
	if c.running {
		if next, busy := s.stepRunning(c, spec); busy {
			return next
		}
	}
	if c.cur != nil && !c.shouldRestart(s.pod.Spec.RestartPolicy) {
		return time.Time{}
	}
	if c.op == opPull {
		if c.opImage == spec.Image {
			return s.finishPull(c, spec)
		}
		c.op = opNone // the spec moved on; the node still finishes that pull
	}
	if next, ok := s.crashBackoff(c, spec); ok {
		return next
	}
	return s.ensureImage(c, spec)
}

// stepRunning handles a running container: a changed image kills it, a
// container due to exit exits. busy reports that it keeps running (or is
// being killed) and next when to look again.
func (s *syncer) stepRunning(c *ctr, spec *corev1.Container) (next time.Time, busy bool) {
	if spec.Image != c.cur.image {
		s.event(spec, corev1.EventTypeNormal, "Killing",
			fmt.Sprintf("Container %s definition changed, will be restarted", spec.Name))
		return s.kill(c, s.t.Stop), true
	}
	if c.exitAt.IsZero() || s.now.Before(c.exitAt) {
		return earliest(afterNow(c.readyAt, s.now), c.exitAt), true
	}
	reason := "Completed"
	if c.exitCode != 0 {
		reason = "Error"
	}
	c.finish(c.exitAt, c.exitCode, reason, false)
	return time.Time{}, false
}

// kill starts stopping c; it has stopped after d.
func (s *syncer) kill(c *ctr, d time.Duration) time.Time {
	c.op, c.opUntil = opKill, s.now.Add(d)
	c.readyAt = time.Time{}
	return c.opUntil
}

// crashBackoff keeps a container that exited by itself from restarting
// before its back-off ends (same image only: a new image is a new
// container definition, as in the kubelet's back-off key).
func (s *syncer) crashBackoff(c *ctr, spec *corev1.Container) (time.Time, bool) {
	if c.cur == nil || c.cur.killed || c.cur.image != spec.Image {
		return time.Time{}, false
	}
	b := c.crash[spec.Image]
	if b == nil || !s.now.Before(b.until()) {
		return time.Time{}, false
	}
	c.wait = waiting{"CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
		b.dur, c.name, s.pod.Name, s.pod.Namespace, s.pod.UID)}
	if !b.evented.Equal(b.until()) {
		b.evented = b.until()
		s.event(spec, corev1.EventTypeWarning, "BackOff", fmt.Sprintf(
			"Back-off restarting failed container %s in pod %s_%s(%s)", c.name, s.pod.Name, s.pod.Namespace, s.pod.UID))
	}
	return b.until(), true
}

// ensureImage makes the image of spec available, honouring the pull
// policy and the pull back-off, then starts the container.
func (s *syncer) ensureImage(c *ctr, spec *corev1.Container) time.Time {
	if _, _, err := canonical(spec.Image); err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", spec.Image, err)
		if c.wait.reason != "InvalidImageName" {
			s.event(spec, corev1.EventTypeWarning, "InspectFailed", msg)
		}
		c.wait = waiting{"InvalidImageName", msg}
		return time.Time{}
	}
	if spec.ImagePullPolicy != corev1.PullAlways {
		if img, id, ok := s.h.images().present(spec.Image, s.now); ok {
			s.event(spec, corev1.EventTypeNormal, "Pulled",
				fmt.Sprintf("Container image %q already present on machine", spec.Image))
			return s.start(c, spec, img, id)
		}
		if spec.ImagePullPolicy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", spec.Image)
			if c.wait.reason != "ErrImageNeverPull" {
				s.event(spec, corev1.EventTypeWarning, "ErrImageNeverPull", msg)
			}
			c.wait = waiting{"ErrImageNeverPull", msg}
			return s.now.Add(s.t.BackoffInitial)
		}
	}
	if next, ok := s.pullBackoff(c, spec); ok {
		return next
	}
	return s.startPull(c, spec)
}

// pullBackoff shows ErrImagePull for the first half of a failed pull's
// back-off and ImagePullBackOff for the rest, until a retry is due.
func (s *syncer) pullBackoff(c *ctr, spec *corev1.Container) (time.Time, bool) {
	b := c.pulls[spec.Image]
	if b == nil || !s.now.Before(b.until()) {
		return time.Time{}, false
	}
	half := b.since.Add(b.dur / 2)
	if s.now.Before(half) {
		c.wait = waiting{"ErrImagePull", b.err}
		return half, true
	}
	c.wait = waiting{"ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", spec.Image, b.err)}
	if !b.evented.Equal(b.until()) {
		b.evented = b.until()
		s.event(spec, corev1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", spec.Image))
	}
	return b.until(), true
}

// startPull resolves the image (the registry round trip) and starts the
// node's pull of it.
func (s *syncer) startPull(c *ctr, spec *corev1.Container) time.Time {
	s.event(spec, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", spec.Image))
	img, err := s.h.resolve(s.ctx, spec.Image)
	if err == nil {
		var pr pullResult
		if pr, err = s.h.images().pull(spec.Image, img, s.now, s.t); err == nil {
			delete(c.pulls, spec.Image)
			c.op, c.opImage, c.opUntil, c.pull = opPull, spec.Image, pr.done, pr
			return s.finishPull(c, spec)
		}
	}
	s.event(spec, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", spec.Image, err))
	s.event(spec, corev1.EventTypeWarning, "Failed", "Error: ErrImagePull")
	b := c.pulls[spec.Image]
	if b == nil {
		b = &backoff{}
		c.pulls[spec.Image] = b
	}
	b.next(s.now, s.t)
	b.err = err.Error()
	c.wait = waiting{"ErrImagePull", b.err}
	return b.since.Add(b.dur / 2)
}

// finishPull waits for the pull of spec's image, then starts the container.
func (s *syncer) finishPull(c *ctr, spec *corev1.Container) time.Time {
	if s.now.Before(c.opUntil) {
		c.wait = waiting{reason: "ContainerCreating"}
		return c.opUntil
	}
	pr := c.pull
	c.op = opNone
	took := pr.done.Sub(pr.requested)
	s.event(spec, corev1.EventTypeNormal, "Pulled", fmt.Sprintf(
		"Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
		spec.Image, (took-pr.waited).Truncate(time.Millisecond), took.Truncate(time.Millisecond), pr.img.Size))
	return s.start(c, spec, pr.img, pr.imageID)
}
