package kubelet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// start runs an opStart through its stages: the crash-loop back-off check,
// the image (present, pulled, or a pull error or back-off), create
// ("Created"), and StartContainer taking Timings.Start ("Started").
func (w *worker) start(ctx context.Context, pod *corev1.Pod, p *plan, o *op, t time.Time) (time.Time, bool) {
	spec := o.spec
	switch p.stage {
	case stBegin:
		if w.inCrashBackoff(pod, p, spec, t) {
			return t, true
		}
		return w.ensureImage(ctx, pod, p, spec, t)
	case stPullFailed:
		w.pullFailed(pod, p, spec, t)
		return t, true
	case stPulled:
		took := p.pull.done.Sub(p.pull.requested)
		w.event(pod, spec.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf(
			"Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
			spec.Image, (took-p.pull.waited).Truncate(time.Millisecond), took.Truncate(time.Millisecond), p.pull.img.Size))
		return w.create(pod, p, spec, p.pull.img, p.pull.imageID, t)
	case stCreated:
		in := w.rt.latest(spec.Name)
		if in.startErr != "" {
			// containerd records the failed start as an exit (128,
			// StartError); the kubelet's sync result is RunContainerError.
			w.rt.exit(in, t, 128, "StartError")
			in.message = in.startErr
			w.event(pod, spec.Name, corev1.EventTypeWarning, "Failed", "Error: "+in.startErr)
			p.results[spec.Name] = &reason{"RunContainerError", in.startErr}
			return t, true
		}
		in.state, in.started = running, t
		in.exitAt, in.exitWith = w.exitOf(pod, o, in, t)
		w.rt.changed = true
		w.event(pod, spec.Name, corev1.EventTypeNormal, "Started", "Container started")
		p.results[spec.Name] = nil
		return t, true
	}
	return t, true
}

// inCrashBackoff is the kubelet's doBackOff: a container whose last
// instance (as the sync saw it) exited is not started again before its
// back-off, counted from that exit, ends; otherwise the back-off grows.
func (w *worker) inCrashBackoff(pod *corev1.Pod, p *plan, spec *corev1.Container, t time.Time) bool {
	var exitedAt time.Time
	for i := len(p.snap.ctrs) - 1; i >= 0; i-- {
		if c := p.snap.ctrs[i]; c.name == spec.Name && c.state == exited {
			exitedAt = c.finished
			break
		}
	}
	if exitedAt.IsZero() {
		return false
	}
	key := spec.Name + "\x00" + spec.Image
	if !w.crash.inBackoffSince(key, exitedAt, t) {
		w.crash.next(key, exitedAt, t)
		return false
	}
	w.event(pod, spec.Name, corev1.EventTypeWarning, "BackOff",
		fmt.Sprintf("Back-off restarting failed container %s in pod %s", spec.Name, podRef(pod)))
	d := w.crash.get(key)
	p.results[spec.Name] = &reason{"CrashLoopBackOff",
		fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", d, spec.Name, podRef(pod))}
	p.backoffUntil = earliest(p.backoffUntil, exitedAt.Add(d))
	return true
}

// ensureImage is the kubelet's EnsureImageExists: the pull policy against
// the node's store, the pull back-off, then a pull (resolved through the
// registry) that ends at its time.
func (w *worker) ensureImage(ctx context.Context, pod *corev1.Pod, p *plan, spec *corev1.Container, t time.Time) (time.Time, bool) {
	ref, _, err := canonical(spec.Image)
	if err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", spec.Image, err)
		w.event(pod, spec.Name, corev1.EventTypeWarning, "InspectFailed", msg)
		w.failStart(pod, p, spec, "InvalidImageName", msg)
		return t, true
	}
	cache := w.h.images()
	if spec.ImagePullPolicy != corev1.PullAlways {
		if img, id, ok := cache.present(spec.Image, t); ok {
			w.event(pod, spec.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf(
				"Container image %q already present on machine and can be accessed by the pod", spec.Image))
			return w.create(pod, p, spec, img, id, t)
		}
		if spec.ImagePullPolicy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", spec.Image)
			w.event(pod, spec.Name, corev1.EventTypeWarning, "ErrImageNeverPull", msg)
			w.failStart(pod, p, spec, "ErrImageNeverPull", msg)
			return t, true
		}
	}
	if w.pulls.inBackoffSinceUpdate(spec.Image, t) {
		msg := fmt.Sprintf("Back-off pulling image %q", spec.Image)
		w.event(pod, spec.Name, corev1.EventTypeNormal, "BackOff", msg)
		if prev, ok := w.pullErr[spec.Image]; ok {
			msg += ": " + prev
		}
		w.failStart(pod, p, spec, "ImagePullBackOff", msg)
		return t, true
	}
	w.event(pod, spec.Name, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", spec.Image))
	img, err := w.h.resolve(ctx, spec.Image)
	if err != nil {
		p.pullErr, p.stage = pullError(spec.Image, ref, err), stPullFailed
		return cache.fail(t, w.t), false
	}
	pr, err := cache.pull(spec.Image, img, t, w.t)
	if err != nil {
		p.pullErr, p.stage = pullError(spec.Image, ref, err), stPullFailed
		return cache.fail(t, w.t), false
	}
	p.pull, p.stage = pr, stPulled
	return pr.done, false
}

// pullError is the runtime's error for a pull that fails, in containerd's
// words (a reference the registry does not hold: "<ref>: not found").
func pullError(image, ref string, err error) string {
	if strings.Contains(err.Error(), "not found") {
		return fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", image, image, ref)
	}
	return fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: %v", image, image, err)
}

// pullFailed: "Failed to pull image", the pull back-off grows, ErrImagePull.
func (w *worker) pullFailed(pod *corev1.Pod, p *plan, spec *corev1.Container, t time.Time) {
	w.event(pod, spec.Name, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", spec.Image, p.pullErr))
	w.pulls.next(spec.Image, t, t)
	w.pullErr[spec.Image] = "ErrImagePull: " + p.pullErr
	w.failStart(pod, p, spec, "ErrImagePull", p.pullErr)
}

// failStart records a failed start: "Error: <reason>" and the reason the
// next status shows.
func (w *worker) failStart(pod *corev1.Pod, p *plan, spec *corev1.Container, why, msg string) {
	w.event(pod, spec.Name, corev1.EventTypeWarning, "Failed", "Error: "+why)
	p.results[spec.Name] = &reason{why, msg}
}

// create makes the container's new instance ("Created"), with the restart
// count of the one before it (as the sync saw it) plus one; it starts
// after Timings.Start.
func (w *worker) create(pod *corev1.Pod, p *plan, spec *corev1.Container, img Image, imageID string, t time.Time) (time.Time, bool) {
	restarts := int32(0)
	if prev := p.snap.latest(spec.Name); prev != nil {
		restarts = prev.restarts + 1
	}
	w.rt.add(&instance{id: w.h.newContainerID(), name: spec.Name, image: spec.Image, imageID: imageID,
		restarts: restarts, state: created, created: t, exitWith: crashCode(img, pod, spec.Name),
		startErr:  missingProgram(spec, img),
		resources: *spec.Resources.DeepCopy()})
	w.event(pod, spec.Name, corev1.EventTypeNormal, "Created", "Container created")
	p.stage = stCreated
	return t.Add(w.t.Start), false
}

// CrashOnStartAnnotation is a fault a test injects into a pod: the
// containers it names (comma-separated) crash (exit 1, after CrashAfter)
// whenever they are started from now on, whatever their image, as an
// application does whose configuration went bad. Only the simulated kubelet
// reads it.
const CrashOnStartAnnotation = "kubelet.inplace.test/crash-on-start"

func crashCode(img Image, pod *corev1.Pod, name string) int32 {
	if img.Crash || slices.Contains(strings.Split(pod.Annotations[CrashOnStartAnnotation], ","), name) {
		return 1
	}
	return 0
}

// exitOf says when a container just started exits by itself: a crashing
// image after CrashAfter (exit 1); a plain init container, or a regular
// one of a pod that does not restart always, after Run (exit 0).
func (w *worker) exitOf(pod *corev1.Pod, o *op, in *instance, t time.Time) (time.Time, int32) {
	switch {
	case in.exitWith != 0:
		return t.Add(w.t.CrashAfter), in.exitWith
	case o.isInit && kindOf(o.spec, true) == initContainer,
		!o.isInit && pod.Spec.RestartPolicy != corev1.RestartPolicyAlways:
		return t.Add(w.t.Run), 0
	}
	return time.Time{}, 0
}

// missingProgram is the runtime's error starting spec from img when its
// command names a program img does not hold (Image.Programs) and no volume
// of the container mounts; "" when it starts.
func missingProgram(spec *corev1.Container, img Image) string {
	if len(spec.Command) == 0 || img.Programs == nil || slices.Contains(img.Programs, spec.Command[0]) {
		return ""
	}
	prog := spec.Command[0]
	for _, m := range spec.VolumeMounts {
		if strings.HasPrefix(prog, strings.TrimSuffix(m.MountPath, "/")+"/") {
			return ""
		}
	}
	return fmt.Sprintf("failed to create containerd task: failed to create shim task: OCI runtime create failed: "+
		"runc create failed: unable to start container process: exec: %q: stat %s: no such file or directory: unknown", prog, prog)
}
