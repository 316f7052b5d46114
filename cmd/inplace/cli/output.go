package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// outputFlag registers -o/--output with its allowed values, the first the
// default, as kubectl does: table (or tree) for people, json and yaml for
// tools; "text" is accepted as another name for table. The
// returned check runs before the command and names the bad value.
func outputFlag(fs *pflag.FlagSet, dst *string, allowed ...string) func() error {
	fs.StringVarP(dst, "output", "o", allowed[0], "output format: "+strings.Join(allowed, ", "))
	return func() error {
		if *dst == "text" && slices.Contains(allowed, "table") {
			*dst = "table"
		}
		if !slices.Contains(allowed, *dst) {
			return fmt.Errorf("--output %q: want one of %s", *dst, strings.Join(allowed, ", "))
		}
		return nil
	}
}

// completeOutput offers the -o values to shell completion.
func completeOutput(cmd *cobra.Command, allowed ...string) {
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(allowed, cobra.ShellCompDirectiveNoFileComp))
}

// writeStructured writes v as indented JSON or as YAML (format "json" or
// "yaml"); it reports false for any other format, which the caller prints
// as a table.
func writeStructured(w io.Writer, format string, v any) (bool, error) {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return true, enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return true, err
		}
		_, err = w.Write(b)
		return true, err
	}
	return false, nil
}
