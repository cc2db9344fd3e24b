package cmdutil

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// DynamoVersionUsage is the help of --dynamo-version, the same on every
// command.
const DynamoVersionUsage = "Read the deployment as this Dynamo release runs it: a version (e.g. 1.3.0) or a routing profile (latest, legacy-v1.2, legacy-v1.1, legacy-tree-size); default: the release its images tell (docs/compatibility.md)"

// AddDynamoVersionFlag registers --dynamo-version with its completion.
func AddDynamoVersionFlag(cmd *cobra.Command, fl *pflag.FlagSet, dst *string) {
	fl.StringVar(dst, "dynamo-version", "", DynamoVersionUsage)
	_ = cmd.RegisterFlagCompletionFunc("dynamo-version", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		out := []string{}
		for _, p := range routecore.Profiles() {
			out = append(out, string(p))
		}
		out = append(out, "1.3.0", "1.2.0", "1.1.0")
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// ValidateDynamoVersion checks --dynamo-version ("" is fine: detect).
func ValidateDynamoVersion(v string) error {
	if _, err := behavior.ParseRelease(v); err != nil {
		return FlagErrorf("--dynamo-version: %v", err)
	}
	return nil
}
