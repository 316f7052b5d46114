package knative

import (
	"context"
	"fmt"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// WaitWatching returns once the ApiServerSource's adapter watches ns: it
// creates a pod no node will take (a canary) and waits for the adapter's
// event about it through the Broker, then deletes it.
//
// Knative rewrites the adapter's Deployment for every new namespace its
// selector matches, and the adapter sends nothing for what it lists when
// it starts (no resync): a pod that changed while the adapter restarted
// is not reported until it changes again. A test that needs verify to see
// a new namespace's pods from their first state (a readiness gate to open)
// waits here first.
func (p *Project) WaitWatching(ctx context.Context, ns string, within time.Duration) error {
	pods := p.Node.World.Client().CoreV1().Pods(ns)
	canary := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "inplace-adapter-canary"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"inplace.dev/no-such-node": "true"},
			Containers: []corev1.Container{{Name: "c", Image: "canary"}}},
	}
	deadline := time.Now().Add(within)
	for i := 0; time.Now().Before(deadline); i++ {
		canary.Name = fmt.Sprintf("inplace-adapter-canary-%d", i)
		if _, err := pods.Create(ctx, canary, metav1.CreateOptions{}); err != nil {
			return err
		}
		suffix := "/namespaces/" + ns + "/pods/" + canary.Name
		_, err := p.Recorder.Wait(ctx, 5*time.Second, "adapter event", func(e cloudevents.Event) bool {
			return strings.HasPrefix(e.Type(), "dev.knative.apiserver.resource.") && strings.HasSuffix(e.Subject(), suffix)
		})
		_ = pods.Delete(ctx, canary.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("the ApiServerSource adapter does not watch namespace %s after %s", ns, within)
}
