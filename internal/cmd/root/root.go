package root

import (
	"github.com/spf13/cobra"

	cmdAuditRoutes "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/auditroutes"
	cmdCapture "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/capture"
	cmdDashboard "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	cmdExplainRoute "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/explainroute"
	cmdHash "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/hash"
	cmdPreflight "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/preflight"
	cmdSimulate "github.com/ai-dynamo/kubectl-dynamo/internal/cmd/simulate"
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
		Example: `  # Per-domain prefill/decode capacity and topology findings of every deployment (exit 2 on findings)
  kubectl dynamo topology -A

  # The same offline, on an example capture (no cluster needed)
  kubectl dynamo topology --from-file examples/prefill-only-zone-required.yaml

  # Dry-run the router for a prompt: where it would go, or why it would fail
  kubectl dynamo explain-route -n serving qwen3-32b --prompt "Hello"

  # The interactive dashboard over the same data
  kubectl dynamo dashboard -n serving

  # Save a redacted capture for offline analysis or a bug report
  kubectl dynamo capture -n serving > capture.yaml

  # Dynamo's KV block hashes for some token ids
  kubectl dynamo hash --tokens 1,2,3,4,5,6,7,8 --block-size 4`,
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
	cmd.AddCommand(cmdPreflight.NewCmdPreflight(f, nil))
	cmd.AddCommand(cmdSimulate.NewCmdSimulate(f, nil))
	cmd.AddCommand(cmdAuditRoutes.NewCmdAuditRoutes(f, nil))
	return cmd
}
