package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// appPort is where the app of test/images serves its version.
const appPort = 8080

// service creates the Service web, in front of the Deployment's pods.
func (sh *shop) service(ctx context.Context) error {
	_, err := sh.w.Client().CoreV1().Services(shopNS).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: appPort, TargetPort: intstr.FromInt32(appPort)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create service web: %w", err)
	}
	return nil
}

// ask is the version the app in pod name answers to GET / (through the
// API server's proxy to the pod's IP).
func (sh *shop) ask(ctx context.Context, name string) (string, error) {
	b, err := sh.w.Client().CoreV1().Pods(shopNS).ProxyGet("http", name, strconv.Itoa(appPort), "/", nil).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("GET / of pod %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// askService sends n GET / to the Service web (the API server's proxy
// picks a Ready endpoint for each) and counts the versions answering.
func (sh *shop) askService(ctx context.Context, n int) (map[string]int, error) {
	got := map[string]int{}
	for range n {
		b, err := sh.w.Client().CoreV1().Services(shopNS).ProxyGet("http", "web", strconv.Itoa(appPort), "/", nil).DoRaw(ctx)
		if err != nil {
			return got, fmt.Errorf("GET / of service web: %w", err)
		}
		got[strings.TrimSpace(string(b))]++
	}
	return got, nil
}

// showService prints what the Service answers and reports whether every
// answer is version want.
func (sh *shop) showService(ctx context.Context, want string) (bool, error) {
	const n = 20
	got, err := sh.askService(ctx, n)
	if err != nil {
		return false, err
	}
	var parts []string
	for v, c := range got {
		parts = append(parts, fmt.Sprintf("%s ×%d", v, c))
	}
	sort.Strings(parts)
	fmt.Fprintf(sh.out, "$ curl http://web.%s.svc:%d/   (%d times, through the API server's service proxy)\n  %s\n",
		shopNS, appPort, n, strings.Join(parts, ", "))
	return got[want] == n, nil
}
