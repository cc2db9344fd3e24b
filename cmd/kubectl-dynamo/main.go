// Command kubectl-dynamo is the kubectl plugin for NVIDIA Dynamo deployments. Run as
// `kubectl dynamo …` once the binary is on PATH.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/root"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"

	// Client-go auth plugins (OIDC and friends), as krew's best practices ask.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// newRoot builds the command tree (a test replaces it).
var newRoot = root.NewCmdRoot

func run(args []string) (code int) {
	streams := iostreams.System()
	// A panic is a bug, never a finding: it must not end the process with Go's
	// exit status 2, which means "the deployment fails requests" here.
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(streams.ErrOut, "error: internal error: %v\nThis is a bug in kubectl-dynamo: please report it with the command line and this message.\n%s", p, debug.Stack())
			streams.Flush()
			code = cmdutil.ExitError
		}
	}()
	f := cmdutil.NewFactory(streams)
	cmd := newRoot(f)
	cmd.SetArgs(args)
	code = cmdutil.Report(streams.ErrOut, cmd, args, cmd.Execute())
	streams.Flush()
	return code
}
