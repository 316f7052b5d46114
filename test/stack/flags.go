package stack

import "github.com/spf13/pflag"

func flagSet() *pflag.FlagSet { return pflag.NewFlagSet("stack", pflag.ContinueOnError) }
