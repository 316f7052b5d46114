package templatesync

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// PreviousImagesAnnotation keeps, newest first, the template images from
// before each of the last 10 syncs: what `kubectl rollout undo` cannot go
// back to in place.
const PreviousImagesAnnotation = "inplace.dev/previous-images"

// MaxPreviousImages bounds the history kept in PreviousImagesAnnotation,
// as a workload's revisionHistoryLimit does by default.
const MaxPreviousImages = 10

// Previous is one entry of the history: the template images by container
// before the sync of one upgrade.
type Previous struct {
	UpgradeID string            `json:"upgradeID"`
	Images    map[string]string `json:"images"`
	SyncedAt  time.Time         `json:"syncedAt"`
}

// ParsePrevious reads PreviousImagesAnnotation, newest first. It also
// reads the single entry older versions wrote.
func ParsePrevious(raw string) ([]Previous, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	var list []Previous
	if strings.HasPrefix(raw, "{") {
		var one Previous
		if err := json.Unmarshal([]byte(raw), &one); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", PreviousImagesAnnotation, err)
		}
		return []Previous{one}, nil
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", PreviousImagesAnnotation, err)
	}
	return list, nil
}

// withPrevious puts e first in the history raw (a repeat of the same
// upgrade replaces its entry), keeping at most MaxPreviousImages. A history
// that cannot be read is started afresh rather than blocking the sync.
func withPrevious(raw string, e Previous) (string, error) {
	list, err := ParsePrevious(raw)
	if err != nil {
		list = nil
	}
	out := []Previous{e}
	for _, old := range list {
		if old.UpgradeID != e.UpgradeID && len(out) < MaxPreviousImages {
			out = append(out, old)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", PreviousImagesAnnotation, err)
	}
	return string(b), nil
}
