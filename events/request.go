package events

import (
	"encoding/json"
	"strings"
)

// UpgradeRequested is an operator's request to move one workload to an
// image (`inplace upgrade`, `inplace undo`). Only the operator's identity
// may publish it: it is the one event that may restrict a rollout to a
// workload and its containers, go back on purpose, or undo a rollout.
const UpgradeRequested = "dev.inplace.upgrade.requested.v1"

// UpgradeRequestData (upgrade.requested) is the image to move to and what
// an operator asks beyond a push of it. compute-spec also keeps what a
// rollout moves to in this form (rollout.Rollout.Push): a registry's push
// is a request with none of the operator's fields set.
type UpgradeRequestData struct {
	// ImagePushedData is the image (Origin "manual" from the CLI); its
	// PushedAt is when the operator asked, or zero for an undo.
	ImagePushedData
	// Target is the one workload (or bare pod) to move; required on the wire.
	Target *ObjectRef `json:"target,omitempty"`
	// Containers, when set, restricts the move to these containers.
	Containers []string `json:"containers,omitempty"`
	// AllowOlder goes back on purpose: to a digest the workload left, or
	// older than the newest it rolled out (`inplace upgrade --allow-older`).
	// Without it nothing ever goes backwards.
	AllowOlder bool `json:"allowOlder,omitempty"`
	// Undo, with AllowOlder, names the upgrade this request undoes
	// (`inplace undo`): its pods go back in place to the images they ran
	// before it. compute-spec checks the claim against its rollout record.
	Undo string `json:"undo,omitempty"`
}

// Validate implements Validator.
func (d UpgradeRequestData) Validate() error {
	if err := d.ImagePushedData.Validate(); err != nil {
		return err
	}
	if d.Target == nil {
		return fieldErr("data.target", "required: an upgrade request names one workload")
	}
	if err := d.Target.validate("data.target"); err != nil {
		return err
	}
	if err := validateContainers(d.Containers); err != nil {
		return err
	}
	if d.Undo != "" && !d.AllowOlder {
		return fieldErr("data.undo", "an undo goes back: it needs data.allowOlder")
	}
	return nil
}

// operatorFields are the JSON names of what only an upgrade.requested may carry.
var operatorFields = []string{"target", "containers", "allowOlder", "undo"}

// OperatorFields names the operator's fields ("data.target", ...) that the
// JSON object data carries, in any letter case (as encoding/json would
// read them), whatever their value. An image.pushed that carries any is
// refused: those fields are an operator's to set, in an upgrade.requested.
func OperatorFields(data []byte) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	var out []string
	for _, f := range operatorFields {
		for k := range m {
			if strings.EqualFold(k, f) {
				out = append(out, "data."+f)
				break
			}
		}
	}
	return out
}
