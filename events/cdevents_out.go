package events

import (
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/package-url/packageurl-go"
)

// CDEvents emitted when a rollout ends (CDEvents spec v0.4.1).
const (
	CDEventsSpecVersion = "0.4.1"
	// CDServiceUpgraded: a rollout completed; the workload runs the new
	// artifact (emit-cdevents in config-inplace). In a fleet (`cluster` in
	// config-inplace) both carry customData `{"cluster": "<name>"}`.
	CDServiceUpgraded = "dev.cdevents.service.upgraded.0.2.0"
	// CDServiceRolledBack: a rollout halted with pods rolled back, or with
	// its failed canary on the way back (its undo requested with the halt).
	CDServiceRolledBack = "dev.cdevents.service.rolledback.0.2.0"
)

type cdServiceContent struct {
	Environment struct {
		ID string `json:"id"`
	} `json:"environment"`
	ArtifactID string `json:"artifactId"`
}

// CDClusterData is a CDEvent's customData: the cluster, when it has a name
// in a fleet, and the verdict of the rollout's canary analysis.
type CDClusterData struct {
	Cluster  string             `json:"cluster,omitempty"`
	Analysis *CDAnalysisVerdict `json:"analysis,omitempty"`
}

// CDAnalysisVerdict is how a rollout's canary analysis ended: Passed, or
// Failed or Inconclusive with the halt's reason and its message (the
// query, the value and the threshold).
type CDAnalysisVerdict struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// analysisVerdict is r's analysis verdict (RolloutData.Analysis), with the
// halt's reason and message when the analysis halted it; nil without one.
func analysisVerdict(r RolloutData) *CDAnalysisVerdict {
	switch r.Analysis {
	case AnalysisFailed, AnalysisInconclusive:
		return &CDAnalysisVerdict{Verdict: r.Analysis, Reason: r.Reason, Message: r.Message}
	case AnalysisPassed:
		return &CDAnalysisVerdict{Verdict: AnalysisPassed, Reason: ReasonAnalysisPassed}
	}
	return nil
}

// CDServiceEvent builds the CDEvent for a finished rollout of in's workload:
// service.upgraded when it completed, service.rolledback when it halted
// after a rollback. The service is the workload, its environment the
// namespace; cluster, when named, is carried as customData {"cluster": …},
// so the CDEvents of one push across a fleet say where each happened, and
// the verdict of a canary analysis as customData {"analysis": {"verdict": …}}.
func CDServiceEvent(in cloudevents.Event, r RolloutData, typ, cluster string) (cloudevents.Event, error) {
	id := DeriveID(in.ID(), typ, r.Workload.String())
	content := cdServiceContent{ArtifactID: ArtifactPURL(r.Target)}
	content.Environment.ID = r.Workload.Namespace
	body := map[string]any{
		"context": cdContext{
			Version: CDEventsSpecVersion, ID: id, Source: Source("compute-spec"),
			Type: typ, Timestamp: time.Now().UTC(),
		},
		"subject": map[string]any{
			"id":      r.Workload.String(),
			"source":  Source("compute-spec"),
			"type":    "service",
			"content": content,
		},
	}
	if custom := (CDClusterData{Cluster: cluster, Analysis: analysisVerdict(r)}); custom != (CDClusterData{}) {
		body["customData"] = custom
		body["customDataContentType"] = "application/json"
	}
	out, err := New(id, typ, Source("compute-spec"), r.Workload.String(), body)
	if err != nil {
		return out, err
	}
	if v := Ext(in, ExtUpgradeID); v != "" {
		out.SetExtension(ExtUpgradeID, v)
	}
	out.SetExtension(ExtTraceParent, childTraceParent(Ext(in, ExtTraceParent), in.ID(), id))
	return out, nil
}

// ArtifactPURL turns an image reference "host/path/name[:tag][@sha256:…]"
// into an OCI purl with repository_url and tag qualifiers.
func ArtifactPURL(ref string) string {
	name, digest, _ := strings.Cut(ref, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	last := name[strings.LastIndex(name, "/")+1:]
	q := packageurl.QualifiersFromMap(map[string]string{"repository_url": name})
	if tag != "" {
		q = append(q, packageurl.Qualifier{Key: "tag", Value: tag})
	}
	return packageurl.NewPackageURL("oci", "", strings.ToLower(last), digest, q, "").ToString()
}
