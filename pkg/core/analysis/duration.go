package analysis

import (
	"fmt"
	"time"
)

// Duration is a duration as written in a spec: "30s", "2m", "1h30m", or ""
// for the default. Parse checks it; D reads it.
type Duration string

// D is the duration; 0 when empty (or invalid, which Parse refuses).
func (d Duration) D() time.Duration {
	v, _ := time.ParseDuration(string(d))
	return v
}

func (d Duration) check() error {
	if d == "" {
		return nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil || v < 0 {
		return fmt.Errorf("want a duration such as \"30s\", got %q", string(d))
	}
	return nil
}
