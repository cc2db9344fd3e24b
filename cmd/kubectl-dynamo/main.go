// Command kubectl-dynamo is the kubectl plugin for NVIDIA Dynamo deployments. Run as
// `kubectl dynamo …` once the binary is on PATH.
package main

import (
	"os"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/root"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"

	// Client-go auth plugins (OIDC and friends), as krew's best practices ask.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	streams := iostreams.System()
	f := cmdutil.NewFactory(streams)
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	code := cmdutil.Report(streams.ErrOut, cmd, args, cmd.Execute())
	streams.Flush()
	return code
}
