package settle

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name      string
		err       error
		want      Kind
		wantDelay time.Duration
	}{
		{"nil is done", nil, Done, 0},
		{"plain error retries", base, Retry, 0},
		{"deadline retries", context.DeadlineExceeded, Retry, 0},
		{"permanent fails", Permanent(base), Fail, 0},
		{"wrapped permanent fails", fmt.Errorf("decode: %w", Permanent(base)), Fail, 0},
		{"permanentf fails", Permanentf("field %q missing", "data.tag"), Fail, 0},
		{"not yet waits", NotYet(3*time.Second, "grace"), Later, 3 * time.Second},
		{"wrapped not yet waits", fmt.Errorf("patch: %w", NotYet(time.Minute, "kubelet")), Later, time.Minute},
		{"zero delay becomes a second", NotYet(0, "x"), Later, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, delay := Classify(tt.err)
			if got != tt.want || delay != tt.wantDelay {
				t.Errorf("Classify(%v) = %v, %v; want %v, %v", tt.err, got, delay, tt.want, tt.wantDelay)
			}
		})
	}
}

func TestPermanentKeepsCause(t *testing.T) {
	base := errors.New("boom")
	err := Permanent(base)
	if !errors.Is(err, base) {
		t.Errorf("errors.Is(Permanent(base), base) = false; want true")
	}
	if err.Error() != "boom" {
		t.Errorf("Error() = %q; want %q", err.Error(), "boom")
	}
	if Permanent(nil) != nil {
		t.Errorf("Permanent(nil) != nil")
	}
}
