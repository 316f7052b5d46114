package resize

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Change is what a request asks of one container: a new CPU and/or memory
// (nil: leave it).
type Change struct {
	CPU, Memory *resource.Quantity
}

// Parse reads a change from the quantities a person writes ("500m",
// "256Mi"); an empty string leaves that resource alone.
func Parse(cpu, memory string) (Change, error) {
	var ch Change
	for _, x := range []struct {
		name, s string
		to      **resource.Quantity
	}{{"cpu", cpu, &ch.CPU}, {"memory", memory, &ch.Memory}} {
		if x.s == "" {
			continue
		}
		q, err := resource.ParseQuantity(x.s)
		if err != nil {
			return Change{}, fmt.Errorf("%s %q: %w", x.name, x.s, err)
		}
		if q.Sign() <= 0 {
			return Change{}, fmt.Errorf("%s %q: must be more than zero", x.name, x.s)
		}
		*x.to = &q
	}
	if ch.CPU == nil && ch.Memory == nil {
		return Change{}, fmt.Errorf("name a cpu or a memory quantity")
	}
	return ch, nil
}

// Desired is the container's resources with ch applied: the request of
// each changed resource is set; its limit too when the container had its
// limit equal to its request (a Guaranteed container stays Guaranteed, as
// the API server requires the pod's QoS class to stay), or when the new
// request would exceed the limit.
func Desired(cur corev1.ResourceRequirements, ch Change) corev1.ResourceRequirements {
	out := *cur.DeepCopy()
	set := func(name corev1.ResourceName, q *resource.Quantity) {
		if q == nil {
			return
		}
		req, hadReq := cur.Requests[name]
		lim, hadLim := cur.Limits[name]
		if out.Requests == nil {
			out.Requests = corev1.ResourceList{}
		}
		out.Requests[name] = q.DeepCopy()
		if hadLim && ((hadReq && req.Cmp(lim) == 0) || q.Cmp(lim) > 0) {
			out.Limits[name] = q.DeepCopy()
		}
	}
	set(corev1.ResourceCPU, ch.CPU)
	set(corev1.ResourceMemory, ch.Memory)
	return out
}

// Equal reports whether a and b ask the same CPU and memory (requests and
// limits), whatever the quantities' spelling.
func Equal(a, b *corev1.ResourceRequirements) bool {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if changed(a.Requests, b.Requests, name) || changed(a.Limits, b.Limits, name) {
			return false
		}
	}
	return true
}

func changed(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	x, okx := a[name]
	y, oky := b[name]
	return okx != oky || okx && x.Cmp(y) != 0
}

// Restarts reports whether the kubelet restarts container c to go from
// resources from to to: a resource that changes and whose resizePolicy is
// RestartContainer (NotRequired is the default).
func Restarts(c *corev1.Container, from, to corev1.ResourceRequirements) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy != corev1.RestartContainer {
			continue
		}
		if changed(from.Requests, to.Requests, p.ResourceName) || changed(from.Limits, to.Limits, p.ResourceName) {
			return true
		}
	}
	return false
}
