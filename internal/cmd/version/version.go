// Package version implements `kubectl dynamo version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/buildinfo"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
)

// Options are the inputs of the version command.
type Options struct {
	IO     *iostreams.IOStreams
	Output cmdutil.OutputFlags
	// Info returns the build stamp; tests replace it.
	Info func() buildinfo.Info
}

// Document is the JSON/YAML form of the version.
type Document struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	buildinfo.Info
}

// NewCmdVersion builds the command. runF, when set, replaces the run step (tests).
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, Info: buildinfo.Get}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the kubectl-dynamo version",
		Args:  cobra.NoArgs,
		Example: `  kubectl dynamo version
  kubectl dynamo version -o json`,
		RunE: func(*cobra.Command, []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return o.Run()
		},
	}
	// table is the human form, as every command's default is; the line has
	// no header, so --no-headers would change nothing and stays hidden.
	cmdutil.AddOutputFlags(cmd, &o.Output, cmdutil.OutputTable, cmdutil.OutputJSON, cmdutil.OutputYAML)
	_ = cmd.Flags().MarkHidden("no-headers")
	return cmd
}

// Validate checks the flags. -o text, the human form's name before it was
// table, is still accepted.
func (o *Options) Validate() error {
	if o.Output.Format == "text" {
		o.Output.Format = cmdutil.OutputTable
	}
	return o.Output.Validate()
}

// Run prints the version.
func (o *Options) Run() error {
	info := o.Info()
	if ok, err := o.Output.PrintStructured(o.IO.Out, Document{APIVersion: printers.APIVersion, Kind: "Version", Info: info}); ok {
		return err
	}
	_, err := fmt.Fprintf(o.IO.Out, "kubectl-dynamo %s (commit %s, built %s, %s, %s)\n",
		info.Version, orUnknown(info.Commit), orUnknown(info.Date), info.GoVersion, info.Platform)
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
