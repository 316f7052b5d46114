package events

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

func readEvent(t *testing.T, path string) cloudevents.Event {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e cloudevents.Event
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e
}

func TestAPIServerSourceBecomesPodUpdated(t *testing.T) {
	in := readEvent(t, "testdata/apiserversource_pod_update.json")
	got, err := Normalize(in)
	if err != nil {
		t.Fatalf("Normalize: %v", err)
	}
	if got.Type() != PodUpdated {
		t.Fatalf("type = %s; want %s", got.Type(), PodUpdated)
	}
	d, err := As[PodUpdatedData](got)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pod.Name != "web-7d4b9c8f6d-x2lkq" || d.Pod.Namespace != "shop" || d.Pod.Spec.NodeName != "node-1" {
		t.Errorf("pod = %s/%s on %s", d.Pod.Namespace, d.Pod.Name, d.Pod.Spec.NodeName)
	}
	cs := d.Pod.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].RestartCount != 1 || !strings.Contains(cs[0].ImageID, "@sha256:") {
		t.Errorf("container statuses not carried: %+v", cs)
	}
	if got.Subject() != "shop/web-7d4b9c8f6d-x2lkq" {
		t.Errorf("subject = %q", got.Subject())
	}
	// The random ApiServerSource id is not trusted: a second delivery of the
	// same pod state with another id gives the same event id.
	again := in.Clone()
	again.SetID("another-random-id")
	got2, err := Normalize(again)
	if err != nil {
		t.Fatal(err)
	}
	if got2.ID() != got.ID() || got.ID() == in.ID() {
		t.Errorf("ids: first %s second %s (input %s)", got.ID(), got2.ID(), in.ID())
	}
}

// A pod listed when the adapter starts (or a new one) arrives as an add:
// the same pod.updated, with the same id as an update of that state.
func TestAPIServerSourceAddBecomesPodUpdated(t *testing.T) {
	update := readEvent(t, "testdata/apiserversource_pod_update.json")
	add := update.Clone()
	add.SetType(APIServerSourceAdd)
	got, err := Normalize(add)
	if err != nil {
		t.Fatalf("Normalize: %v", err)
	}
	want, err := Normalize(update)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type() != PodUpdated || got.ID() != want.ID() {
		t.Errorf("add gave %s %s; want %s %s", got.Type(), got.ID(), PodUpdated, want.ID())
	}
	del := update.Clone()
	del.SetType("dev.knative.apiserver.resource.delete")
	if _, err := FromAPIServerSource(del); !errors.Is(err, settle.ErrPermanent) {
		t.Errorf("a delete: err = %v; want permanent", err)
	}
}

func TestAPIServerSourceRejectsOtherKinds(t *testing.T) {
	in := readEvent(t, "testdata/apiserversource_pod_update.json")
	in.SetData(cloudevents.ApplicationJSON, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "x"}})
	_, err := Normalize(in)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "data.kind" || !errors.Is(err, settle.ErrPermanent) {
		t.Errorf("err = %v; want permanent error on data.kind", err)
	}
}

func TestCDEventArtifactPublished(t *testing.T) {
	tests := []struct {
		file string
		want ImagePushedData
	}{
		{"testdata/cdevents_artifact_published_v04.json", ImagePushedData{Registry: "mycr.io", Repository: "myapp", Tag: "v1.2.3",
			Digest: digestA, PushedAt: time.Date(2023, 3, 20, 14, 27, 5, 315384000, time.UTC), Origin: "cdevents"}},
		{"testdata/cdevents_artifact_published_v05.json", ImagePushedData{Registry: "mycr.io", Repository: "myapp",
			Digest: digestA, PushedAt: time.Date(2023, 3, 20, 14, 27, 5, 315384000, time.UTC), Origin: "cdevents"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			in := cloudevents.NewEvent()
			in.SetID("cd-1")
			in.SetSource("/event/source/123")
			in.SetType("dev.cdevents.artifact.published.0.3.0")
			in.SetData(cloudevents.ApplicationJSON, json.RawMessage(body))
			out, err := Normalize(in)
			if err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			got, err := As[ImagePushedData](out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if out.ID() != PushID(tt.want) {
				t.Errorf("id = %s; want PushID %s", out.ID(), PushID(tt.want))
			}
		})
	}
}

func TestCDEventArtifactPublishedErrors(t *testing.T) {
	tests := []struct {
		name, body, field string
	}{
		{"not json", `{`, "body"},
		{"other type", `{"context":{"type":"dev.cdevents.build.finished.0.1.0"},"subject":{"id":"x"}}`, "context.type"},
		{"no subject", `{"context":{"type":"dev.cdevents.artifact.published.0.2.0"},"subject":{}}`, "subject.id"},
		{"not oci", `{"context":{"type":"dev.cdevents.artifact.published.0.2.0"},"subject":{"id":"pkg:golang/x/y@v1"}}`, "subject.id"},
		{"no repository_url", `{"context":{"type":"dev.cdevents.artifact.published.0.2.0"},"subject":{"id":"pkg:oci/x@sha256%3A` + digestA[7:] + `"}}`, "subject.id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ImagePushedFromCDEvent([]byte(tt.body))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("err = %v; want a FieldError on %s", err, tt.field)
			}
		})
	}
}

func TestPushID(t *testing.T) {
	d := ImagePushedData{Registry: "docker.io", Repository: "library/nginx", Tag: "1.27", Origin: "dockerhub", PushedAt: at}
	again := d
	again.Origin = "other"
	if PushID(d) != PushID(again) {
		t.Errorf("origin changed the id of the same push")
	}
	later := d
	later.PushedAt = at.Add(time.Hour)
	if PushID(d) == PushID(later) {
		t.Errorf("a re-push of a moving tag (no digest) got the same id")
	}
	withDigest, sameDigestLater := d, d
	withDigest.Digest, sameDigestLater.Digest = digestA, digestA
	sameDigestLater.PushedAt = at.Add(time.Hour)
	if PushID(withDigest) != PushID(sameDigestLater) {
		t.Errorf("the same digest pushed twice got two ids")
	}
}

func TestCDServiceEvent(t *testing.T) {
	in, _ := New("in-1", RolloutCompleted, Source("compute-spec"), "x", samples()[RolloutCompleted])
	in.SetExtension(ExtUpgradeID, "u-7f3a")
	r := samples()[RolloutCompleted].(RolloutData)
	out, err := CDServiceEvent(in, r, CDServiceUpgraded, "")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Context struct{ Version, Type string }
		Subject struct {
			ID, Type string
			Content  struct {
				Environment struct{ ID string }
				ArtifactID  string
			}
		}
	}
	if err := json.Unmarshal(out.Data(), &body); err != nil {
		t.Fatal(err)
	}
	if out.Type() != CDServiceUpgraded || body.Context.Type != CDServiceUpgraded || body.Context.Version != CDEventsSpecVersion {
		t.Errorf("type %s / context %+v", out.Type(), body.Context)
	}
	if body.Subject.Type != "service" || body.Subject.Content.Environment.ID != "shop" {
		t.Errorf("subject = %+v", body.Subject)
	}
	wantPURL := "pkg:oci/web@" + digestA + "?repository_url=registry.example%2Fshop%2Fweb&tag=1.3.0"
	if body.Subject.Content.ArtifactID != wantPURL {
		t.Errorf("artifactId = %s\nwant        %s", body.Subject.Content.ArtifactID, wantPURL)
	}
	// The purl we emit is one we can read back.
	back, err := ImagePushedFromCDEvent([]byte(`{"context":{"type":"dev.cdevents.artifact.published.0.2.0"},"subject":{"id":"` + wantPURL + `"}}`))
	if err != nil || back.Ref() != r.Target {
		t.Errorf("read back %q (%v); want %q", back.Ref(), err, r.Target)
	}
	if UpgradeID(out) != "u-7f3a" {
		t.Errorf("upgradeid not carried")
	}
	if strings.Contains(string(out.Data()), "customData") {
		t.Errorf("customData without a cluster: %s", out.Data())
	}
}

// TestCDServiceEventCarriesTheCluster: in a fleet, each cluster's CDEvent
// names it, so one push's events across the fleet say where they happened.
func TestCDServiceEventCarriesTheCluster(t *testing.T) {
	in, _ := New("in-1", RolloutCompleted, Source("compute-spec"), "x", samples()[RolloutCompleted])
	r := samples()[RolloutCompleted].(RolloutData)
	for _, cluster := range []string{"staging", "prod-eu"} {
		out, err := CDServiceEvent(in, r, CDServiceRolledBack, cluster)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			CustomData            CDClusterData
			CustomDataContentType string
		}
		if err := json.Unmarshal(out.Data(), &body); err != nil {
			t.Fatal(err)
		}
		if body.CustomData.Cluster != cluster || body.CustomDataContentType != "application/json" {
			t.Errorf("cluster %s: customData %+v (%q)", cluster, body.CustomData, body.CustomDataContentType)
		}
	}
}

// TestCDServiceEventCarriesTheVerdict: a rollout halted by its canary
// analysis says so in the CDEvent's customData, with the reason and the
// message naming the query, the value and the threshold; a completed one
// whose analysis passed says Passed; another halt carries none.
func TestCDServiceEventCarriesTheVerdict(t *testing.T) {
	in, _ := New("in-1", RolloutHalted, Source("compute-spec"), "x", samples()[RolloutCompleted])
	msg := "analysis step 1 of 1: query error-ratio: 0.1, want < 0.05 (1 failed, 0 tolerated)"
	for _, tc := range []struct {
		reason, analysis string
		want             *CDAnalysisVerdict
	}{
		{ReasonAnalysisFailed, AnalysisFailed, &CDAnalysisVerdict{Verdict: AnalysisFailed, Reason: ReasonAnalysisFailed, Message: msg}},
		{ReasonAnalysisInconclusive, AnalysisInconclusive, &CDAnalysisVerdict{Verdict: AnalysisInconclusive, Reason: ReasonAnalysisInconclusive, Message: msg}},
		{"", AnalysisPassed, &CDAnalysisVerdict{Verdict: AnalysisPassed, Reason: ReasonAnalysisPassed}},
		{"ImagePullBackOff", "", nil},
		{"", "", nil},
	} {
		r := samples()[RolloutCompleted].(RolloutData)
		r.Reason, r.Message, r.Analysis = tc.reason, msg, tc.analysis
		out, err := CDServiceEvent(in, r, CDServiceRolledBack, "")
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ CustomData CDClusterData }
		if err := json.Unmarshal(out.Data(), &body); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, body.CustomData.Analysis); diff != "" {
			t.Errorf("%s: customData.analysis (-want +got):\n%s", tc.reason, diff)
		}
	}
}
