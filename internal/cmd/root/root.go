package root

import (
	"github.com/spf13/cobra"

	cmdCapture "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/capture"
	cmdDashboard "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	cmdExplainRoute "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/explainroute"
	cmdHash "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/hash"
	cmdTopology "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/topology"
	cmdVersion "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/version"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
)

// DisplayName is how the plugin is invoked by users.
const DisplayName = "kubectl dynamo"

// NewCmdRoot builds the root command with every subcommand. The kubectl connection
// flags (--kubeconfig, --context, -n, …) and --color are persistent, so they work
// on every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	var color string
	cmd := &cobra.Command{
		Use:   "kubectl-dynamo",
		Short: "Inspect and explain NVIDIA Dynamo LLM-inference routing on Kubernetes",
		Long: `kubectl dynamo inspects NVIDIA Dynamo deployments and dry-runs the Dynamo KV
router's decisions with a faithful Go port of its logic.

It never changes anything in the cluster.`,
		Example: `  # Compute Dynamo's KV block hashes for some token ids
  kubectl dynamo hash --tokens 1,2,3,4,5,6,7,8 --block-size 4

  # Print the version
  kubectl dynamo version -o json`,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: DisplayName,
		},
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			mode, err := iostreams.ParseColorMode(color)
			if err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			f.IOStreams.SetColorMode(mode)
			return nil
		},
	}
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })

	f.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVar(&color, "color", string(iostreams.ColorAuto),
		"Colour output: auto|always|never (auto honours NO_COLOR and CLICOLOR_FORCE)")
	_ = cmd.RegisterFlagCompletionFunc("color", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("namespace", completion.Namespaces(f))
	_ = cmd.RegisterFlagCompletionFunc("context", completion.Contexts(f))

	cmd.AddCommand(cmdVersion.NewCmdVersion(f, nil))
	cmd.AddCommand(cmdHash.NewCmdHash(f, nil))
	cmd.AddCommand(cmdTopology.NewCmdTopology(f, nil))
	cmd.AddCommand(cmdCapture.NewCmdCapture(f, nil))
	cmd.AddCommand(cmdExplainRoute.NewCmdExplainRoute(f, nil))
	cmd.AddCommand(cmdDashboard.NewCmdDashboard(f, nil))
	return cmd
}
