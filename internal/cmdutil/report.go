package cmdutil

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Report prints err once, in kubectl's "error: …" form, adds the usage hint for
// flag errors and any "Try: …" hint, and returns the process exit code.
func Report(errOut io.Writer, root *cobra.Command, args []string, err error) int {
	if err == nil {
		return ExitOK
	}
	var re *ResultError
	if errors.As(err, &re) {
		if re.Message != "" {
			fmt.Fprintln(errOut, re.Message)
		}
		return re.Code
	}
	fmt.Fprintf(errOut, "error: %v\n", err)
	var he *HintError
	if errors.As(err, &he) && he.Hint != "" {
		fmt.Fprintf(errOut, "%s\n", he.Hint)
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		name := "kubectl dynamo"
		if c, _, ferr := root.Find(args); ferr == nil && c != nil {
			name = c.DisplayName()
			if c != root {
				name = root.DisplayName() + " " + c.Name()
			}
		}
		fmt.Fprintf(errOut, "See '%s --help' for usage.\n", name)
	}
	return ExitCode(err)
}
