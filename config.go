package function

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/config"
)

// FunctionsKey names the functions one service runs ("verify"); unset
// means all of app.KnativeFunctions.
const FunctionsKey = "INPLACE_FUNCTIONS"

// processFrom reads the same settings as `inplace run` (config.Process)
// from cfg, where func-go puts the environment: INPLACE_NATS_URL,
// INPLACE_NAMESPACE, INPLACE_FUNCTIONS, ... A bad value names its key.
func processFrom(cfg map[string]string) (*config.Process, error) {
	fs := pflag.NewFlagSet("function", pflag.ContinueOnError)
	var p config.Process
	if err := config.BindFlags(fs, &p); err != nil {
		return nil, err
	}
	var errs []string
	fs.VisitAll(func(fl *pflag.Flag) {
		if v, ok := cfg[envKey(fl.Name)]; ok {
			if err := fs.Set(fl.Name, v); err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: %v", envKey(fl.Name), v, err))
			}
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	if _, ok := cfg[FunctionsKey]; !ok {
		p.Functions = append([]string(nil), app.KnativeFunctions...)
	}
	p.WatchPods = false
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return &p, nil
}

// envKey is the variable of a flag, as config.BindFlags names it:
// --nats-url ↔ INPLACE_NATS_URL.
func envKey(flag string) string {
	return "INPLACE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
