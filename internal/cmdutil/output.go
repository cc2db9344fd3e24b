package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Output formats understood by data commands.
const (
	OutputTable = "table"
	OutputWide  = "wide"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
)

// OutputFlags holds -o/--output and --no-headers for a data command.
type OutputFlags struct {
	Format    string
	NoHeaders bool
	allowed   []string
}

// AddOutputFlags registers -o/--output (with shell completion of the allowed
// formats) and --no-headers on cmd.
func AddOutputFlags(cmd *cobra.Command, o *OutputFlags, allowed ...string) {
	if len(allowed) == 0 {
		allowed = []string{OutputTable, OutputWide, OutputJSON, OutputYAML}
	}
	o.allowed = allowed
	if o.Format == "" {
		o.Format = allowed[0]
	}
	cmd.Flags().StringVarP(&o.Format, "output", "o", o.Format, "Output format: "+strings.Join(allowed, "|"))
	if slices.Contains(allowed, OutputTable) {
		cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Omit column headers in table output")
	}
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
}

// Validate checks the chosen format.
func (o *OutputFlags) Validate() error {
	if !slices.Contains(o.allowed, o.Format) {
		return FlagErrorf("unknown output format %q: use one of %s", o.Format, strings.Join(o.allowed, ", "))
	}
	return nil
}

// IsTable reports whether the output is a human table (table or wide).
func (o *OutputFlags) IsTable() bool { return o.Format == OutputTable || o.Format == OutputWide }

// String describes the flag value (for messages).
func (o *OutputFlags) String() string { return fmt.Sprintf("-o %s", o.Format) }
