package config

import (
	"fmt"
	"time"

	"knative.dev/pkg/configmap"

	"github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/inputs/signature"
)

// ConfigMapName is the ConfigMap holding the Defaults.
const ConfigMapName = "config-inplace"

// Defaults apply where a workload's annotations say nothing, and tune the
// functions. They may change at any time (ConfigMap watch).
type Defaults struct {
	// Policy defaults: max-unavailable, grace-seconds, prepull, verify-seconds.
	Policy policy.Defaults
	// PrepullNamespace is where pre-pull pods run.
	PrepullNamespace string
	// PrepullPerNode bounds concurrent pre-pulls on one node.
	PrepullPerNode int
	// PrepullTimeout bounds one pre-pull before the upgrade fails.
	PrepullTimeout time.Duration
	// EmitCDEvents makes compute-spec emit CDEvents service.upgraded/rolledback.
	EmitCDEvents bool
	// Cluster is this cluster's name in a fleet (the fleet policy's name
	// for it); its CDEvents carry it. Empty outside a fleet.
	Cluster string
	// TemplateReference is how the template sync writes images into a
	// template unless a workload's inplace.dev/template-reference says
	// otherwise: "tag@digest" or "tag".
	TemplateReference string
	// Watchdog: slack added to every deadline of a pod in flight, how often
	// a late step is reminded and how many times before the pod is given up,
	// and how long a rollout may stall (nothing in flight, pods waiting)
	// before it is halted.
	WatchdogSlack       time.Duration
	WatchdogRemindEvery time.Duration
	WatchdogReminders   int
	StallDeadline       time.Duration
	// ApprovalTimeout is how long a rollout waits for an approver before
	// it ends (ApprovalExpired).
	ApprovalTimeout time.Duration
	// Signature is the signature every workload that names none must show
	// (signature-key, signature-identity, signature-issuer); zero: none.
	Signature signature.Policy
	// TrustedRoot is the path of the Sigstore trusted_root.json keyless
	// signatures are verified against (signature-trusted-root).
	TrustedRoot string
	// SignatureWait is how long a push without any signature is retried
	// before it is refused: signatures are often pushed just after the image.
	SignatureWait time.Duration
}

// StandardDefaults are used when the ConfigMap is absent or leaves a key out.
func StandardDefaults() Defaults {
	return Defaults{
		Policy:            policy.StandardDefaults(),
		PrepullNamespace:  "inplace-system",
		PrepullPerNode:    2,
		PrepullTimeout:    5 * time.Minute,
		EmitCDEvents:      true,
		TemplateReference: policy.ReferenceTagDigest,

		WatchdogSlack:       time.Minute,
		WatchdogRemindEvery: time.Minute,
		WatchdogReminders:   3,
		StallDeadline:       15 * time.Minute,
		ApprovalTimeout:     24 * time.Hour,
		SignatureWait:       2 * time.Minute,
	}
}

// ParseDefaults reads the ConfigMap data over StandardDefaults. The
// `_example` key is documentation and ignored. Errors name the key.
func ParseDefaults(data map[string]string) (Defaults, error) {
	d := StandardDefaults()
	maxUnavailable := d.Policy.MaxUnavailable.String()
	pollInterval := "off"
	approval := string(policy.ApprovalNone)
	err := configmap.Parse(data,
		configmap.AsString("max-unavailable", &maxUnavailable),
		configmap.AsInt("grace-seconds", &d.Policy.GraceSeconds),
		configmap.AsBool("prepull", &d.Policy.Prepull),
		configmap.AsInt("verify-seconds", &d.Policy.VerifySeconds),
		configmap.AsString("prepull-namespace", &d.PrepullNamespace),
		configmap.AsInt("prepull-per-node", &d.PrepullPerNode),
		configmap.AsDuration("prepull-timeout", &d.PrepullTimeout),
		configmap.AsBool("emit-cdevents", &d.EmitCDEvents),
		configmap.AsString("cluster", &d.Cluster),
		configmap.AsString("template-reference", &d.TemplateReference),
		configmap.AsDuration("watchdog-slack", &d.WatchdogSlack),
		configmap.AsDuration("watchdog-remind-every", &d.WatchdogRemindEvery),
		configmap.AsInt("watchdog-reminders", &d.WatchdogReminders),
		configmap.AsDuration("stall-deadline", &d.StallDeadline),
		configmap.AsString("poll-interval", &pollInterval),
		configmap.AsString("approval", &approval),
		configmap.AsDuration("approval-timeout", &d.ApprovalTimeout),
		configmap.AsString("signature-key", &d.Signature.Key),
		configmap.AsString("signature-identity", &d.Signature.Identity),
		configmap.AsString("signature-issuer", &d.Signature.Issuer),
		configmap.AsString("signature-trusted-root", &d.TrustedRoot),
		configmap.AsDuration("signature-wait", &d.SignatureWait),
	)
	if err != nil {
		return d, fmt.Errorf("configmap %s: %w", ConfigMapName, err)
	}
	mu, err := policy.FromAnnotations(map[string]string{
		policy.AnnotationPolicy: "force", policy.AnnotationMaxUnavailable: maxUnavailable,
	}, d.Policy)
	if err != nil {
		return d, fmt.Errorf("configmap %s: max-unavailable: %w", ConfigMapName, err)
	}
	d.Policy.MaxUnavailable = mu.MaxUnavailable
	if d.TemplateReference, err = policy.ParseTemplateReference(d.TemplateReference); err != nil {
		return d, fmt.Errorf("configmap %s: template-reference: %w", ConfigMapName, err)
	}
	if d.Policy.PollInterval, err = policy.ParsePollInterval("poll-interval", pollInterval); err != nil {
		return d, fmt.Errorf("configmap %s: %w", ConfigMapName, err)
	}
	if d.Policy.Approval, err = policy.ParseApproval("approval", approval); err != nil {
		return d, fmt.Errorf("configmap %s: %w", ConfigMapName, err)
	}
	if err := d.Signature.Validate("configmap " + ConfigMapName + ": signature-* keys: "); err != nil {
		return d, err
	}
	if d.Cluster != "" {
		if err := fleet.ValidName(d.Cluster); err != nil {
			return d, fmt.Errorf("configmap %s: cluster: %w", ConfigMapName, err)
		}
	}
	if d.SignatureWait < 0 {
		return d, fmt.Errorf("configmap %s: signature-wait: must not be negative, not %s", ConfigMapName, d.SignatureWait)
	}
	if d.ApprovalTimeout <= 0 {
		return d, fmt.Errorf("configmap %s: approval-timeout: must be positive, not %s", ConfigMapName, d.ApprovalTimeout)
	}
	switch {
	case d.Policy.GraceSeconds < 0:
		return d, fmt.Errorf("configmap %s: grace-seconds: %d is negative", ConfigMapName, d.Policy.GraceSeconds)
	case d.Policy.VerifySeconds <= 0:
		return d, fmt.Errorf("configmap %s: verify-seconds: must be positive, not %d", ConfigMapName, d.Policy.VerifySeconds)
	case d.PrepullPerNode <= 0:
		return d, fmt.Errorf("configmap %s: prepull-per-node: must be positive, not %d", ConfigMapName, d.PrepullPerNode)
	case d.PrepullTimeout <= 0:
		return d, fmt.Errorf("configmap %s: prepull-timeout: must be positive, not %s", ConfigMapName, d.PrepullTimeout)
	case d.PrepullNamespace == "":
		return d, fmt.Errorf("configmap %s: prepull-namespace: must not be empty", ConfigMapName)
	case d.WatchdogSlack < 0:
		return d, fmt.Errorf("configmap %s: watchdog-slack: must not be negative, not %s", ConfigMapName, d.WatchdogSlack)
	case d.WatchdogRemindEvery <= 0:
		return d, fmt.Errorf("configmap %s: watchdog-remind-every: must be positive, not %s", ConfigMapName, d.WatchdogRemindEvery)
	case d.WatchdogReminders < 0:
		return d, fmt.Errorf("configmap %s: watchdog-reminders: must not be negative, not %d", ConfigMapName, d.WatchdogReminders)
	case d.StallDeadline <= 0:
		return d, fmt.Errorf("configmap %s: stall-deadline: must be positive, not %s", ConfigMapName, d.StallDeadline)
	}
	return d, nil
}
