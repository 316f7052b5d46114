package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Two lines as kube-apiserver v1.35 writes them (trimmed of fields the
// benchmark does not read).
const auditLines = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-0","verb":"patch","user":{"username":"inplace-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"inplace","objectRef":{"resource":"pods","namespace":"shop","name":"web-0","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-02T03:04:05.123456Z","stageTimestamp":"2026-01-02T03:04:05.130000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods/web-0/status","verb":"update","user":{"username":"inplace-admin"},"userAgent":"inplace-simulated-kubelet","objectRef":{"resource":"pods","namespace":"shop","name":"web-0","apiVersion":"v1","subresource":"status"},"responseStatus":{"metadata":{},"code":409},"requestReceivedTimestamp":"2026-01-02T03:04:06Z","stageTimestamp":"2026-01-02T03:04:06.01Z"}
`

func TestAuditLogRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	// The second line is still being written: only the first is read.
	if err := os.WriteFile(path, []byte(auditLines[:len(auditLines)-40]), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &auditLog{path: path}
	if err := a.read(); err != nil {
		t.Fatalf("read: %v", err)
	}
	want := []request{{Verb: "patch", User: "inplace-admin", UserAgent: "inplace", Namespace: "shop", Resource: "pods",
		Name: "web-0", URI: "/api/v1/namespaces/shop/pods/web-0", Code: 200,
		Received: time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)}}
	if diff := cmp.Diff(want, a.reqs); diff != "" {
		t.Fatalf("after a partial line (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(path, []byte(auditLines), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.read(); err != nil || len(a.reqs) != 2 || a.reqs[1].Subresource != "status" || a.reqs[1].Code != 409 {
		t.Fatalf("after the rest: %v, %+v", err, a.reqs)
	}
	if !a.seen("pods/web-0/status") || a.seen("fence-1") {
		t.Error("seen: want the status update logged, no fence")
	}
	if got := a.between(time.Date(2026, 1, 2, 3, 4, 5, 500, time.UTC), time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)); len(got) != 2 {
		t.Errorf("between: %d requests, want 2", len(got))
	}
}

func TestActorOf(t *testing.T) {
	tests := []struct {
		name string
		r    request
		want string
	}{
		{"project", request{UserAgent: "inplace", Resource: "pods"}, actorProject},
		{"an Event is Events, whoever writes it", request{UserAgent: "inplace", Resource: "events"}, actorEvents},
		{"simulated kubelet", request{UserAgent: "inplace-simulated-kubelet", Resource: "pods", Subresource: "status"}, actorKubelet},
		{"hollow kubelet", request{UserAgent: "hollow-kubelet/node-0", Resource: "pods"}, actorKubelet},
		{"binding by the simulated scheduler", request{UserAgent: "inplace-simulated-kubelet", Resource: "pods", Subresource: "binding"}, actorScheduler},
		{"kube-scheduler", request{UserAgent: "kube-scheduler/v1.35.4 (linux/amd64)", Resource: "pods", Subresource: "status"}, actorScheduler},
		{"replicaset controller", request{User: "system:serviceaccount:kube-system:replicaset-controller", UserAgent: "kube-controller-manager/v1.35.4/system:serviceaccount:kube-system:replicaset-controller", Resource: "pods"}, actorControllers},
		{"the benchmark", request{UserAgent: benchUserAgent, Resource: "pods"}, actorBench},
		{"someone else", request{UserAgent: "kubectl/v1.35", Resource: "pods"}, actorOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := actorOf(tc.r); got != tc.want {
				t.Errorf("actorOf = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestTallyOf(t *testing.T) {
	reqs := []request{
		{Verb: "patch", UserAgent: "inplace", Namespace: "shop", Resource: "pods", Code: 200},
		{Verb: "patch", UserAgent: "inplace", Namespace: "shop", Resource: "pods", Code: 422},
		{Verb: "get", UserAgent: "inplace", Namespace: "shop", Resource: "pods", Code: 200},
		{Verb: "get", UserAgent: "inplace", Resource: "nodes", Code: 200},
		{Verb: "update", UserAgent: "inplace-simulated-kubelet", Namespace: "shop", Resource: "pods", Subresource: "status", Code: 200},
		{Verb: "create", UserAgent: "inplace", Namespace: "shop", Resource: "events", Code: 201},
		{Verb: "create", UserAgent: benchUserAgent, Namespace: "shop", Resource: "pods", Code: 201},
		{Verb: "patch", UserAgent: "inplace", Namespace: "elsewhere", Resource: "pods", Code: 200},
	}
	got := tallyOf(reqs, map[string]bool{"shop": true})
	want := tally{
		Writes:   map[string]int{actorProject: 2, actorKubelet: 1, actorEvents: 1},
		Failed:   map[string]int{actorProject: 1},
		Requests: map[string]int{actorProject: 3, actorKubelet: 1, actorEvents: 1},
		Detail: map[string]map[string]int{
			actorProject: {"patch pods": 2, "get pods": 1},
			actorKubelet: {"update pods/status": 1},
			actorEvents:  {"create events": 1},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("in namespace shop (-want +got):\n%s", diff)
	}
	if all := tallyOf(reqs, nil); all.Requests[actorProject] != 5 {
		t.Errorf("anywhere: project requests %d, want 5 (a node read and another namespace too)", all.Requests[actorProject])
	}
}
