package computespec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/inputs/signature"
)

// SignatureVerifier checks a pushed digest against a workload's signature
// policy (signature.Verifier).
type SignatureVerifier interface {
	Verify(ctx context.Context, r signature.Request) (string, error)
}

// ReasonSignatureRefused is the reason of a push refused for its signature.
const ReasonSignatureRefused = "SignatureRefused"

// errSignature: the push is not signed as the workload requires.
var errSignature = errors.New("signature check")

// signatureRecheck is how soon a push without a signature yet looks again.
const signatureRecheck = 5 * time.Second

// signer verifies the pushed digest for t, before anything is planned, and
// returns who signed it ("" when t requires no signature). It fails
// closed: a bad policy, no verifier, no signature (once signature-wait
// from the push's arrival has passed) or none that verifies is
// errSignature with the reasons; an unreachable registry is retried.
func (f *Function) signer(ctx context.Context, in cloudevents.Event, t controller.Target, push events.UpgradeRequestData) (string, error) {
	d := f.d.Defaults.Load()
	pol, err := signature.FromAnnotations(t.Workload.Meta.Annotations, d.Signature)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errSignature, err)
	}
	if !pol.Required() {
		return "", nil
	}
	if f.d.Signatures == nil {
		return "", fmt.Errorf("%w: a signature is required (%s) and this compute-spec verifies none", errSignature, pol)
	}
	secrets, err := f.pullSecrets(t)
	if err != nil {
		return "", err
	}
	who, err := f.d.Signatures.Verify(ctx, signature.Request{Push: push.ImagePushedData, Namespace: t.Workload.Ref.Namespace, Policy: pol,
		PullSecrets: secrets, TrustedRoot: d.TrustedRoot})
	switch {
	case err == nil:
		return who, nil
	case errors.Is(err, signature.ErrUnsigned) && f.d.Now().Before(in.Time().Add(d.SignatureWait)):
		return "", settle.NotYet(signatureRecheck, "%s: no signature on %s yet; waiting for one until %s", t.Workload.Ref,
			push.Digest, in.Time().Add(d.SignatureWait).UTC().Format(time.RFC3339))
	case errors.Is(err, signature.ErrRefused):
		return "", fmt.Errorf("%w: %v", errSignature, err)
	}
	return "", wrap("verify the signature of "+push.Ref(), err)
}

// recordRefusal keeps a refused push in the rollout record, for inplace
// status: a rollout of its own (phase Refused) when none is in flight,
// else a note on the one in flight. Redelivered, it changes nothing.
func (f *Function) recordRefusal(ctx context.Context, in cloudevents.Event, t controller.Target, push events.UpgradeRequestData, why string) error {
	ref := t.Workload.Ref
	upgradeID, now := events.DeriveUpgradeID(in.ID(), ref), f.d.Now()
	_, err := f.d.Store.Update(ctx, rollout.Key(ref), func(old []byte) ([]byte, error) {
		prev, err := controller.Decode(old)
		if err != nil {
			return nil, err
		}
		if prev != nil && prev.UpgradeID == upgradeID {
			return nil, errRecorded
		}
		if prev != nil && !prev.Phase.Finished() {
			prev.Refusal = &rollout.Refusal{Target: push.Ref(), Reason: ReasonSignatureRefused, Message: why, At: now}
			return json.Marshal(prev)
		}
		r := rollout.Begin(prev, upgradeID, ref, push, t.RolloutOptions(), now)
		r.Phase, r.Reason, r.Message = rollout.Refused, ReasonSignatureRefused, why
		return json.Marshal(r)
	})
	if errors.Is(err, errRecorded) {
		return nil
	}
	return err
}

// errRecorded: the refusal is in the record already (a redelivery).
var errRecorded = errors.New("refusal recorded already")
