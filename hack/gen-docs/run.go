package main

import (
	"errors"
	"os"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/root"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
)

// Clock is the time every generated block runs at.
var Clock = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// runCommand runs `kubectl dynamo args…` in-process, as a user on a terminal
// without colour, with no kubeconfig so that nothing can reach a cluster. A usage error is returned as an error: it has no place in the docs.
func runCommand(args []string) (Result, error) {
	streams, _, out, errOut := iostreams.Test()
	streams.SetStdoutTTY(false)
	streams.SetGetenv(func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	})
	f := cmdutil.NewFactory(streams)
	f.Now = func() time.Time { return Clock }
	// No kubeconfig, and a server nothing listens on (client-go would otherwise
	// fall back to localhost:8080): a block that forgets --from-file fails.
	kubeconfig, server := os.DevNull, "https://127.0.0.1:1"
	f.ConfigFlags.KubeConfig = &kubeconfig
	f.ConfigFlags.APIServer = &server
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	err := cmd.Execute()
	code := cmdutil.Report(streams.ErrOut, cmd, args, err)
	var fe *cmdutil.FlagError
	if errors.As(err, &fe) || (err != nil && strings.HasPrefix(err.Error(), "unknown command")) {
		return Result{}, errors.New("usage error: " + errOut.String())
	}
	return Result{Stdout: out.String(), Stderr: errOut.String(), ExitCode: code}, nil
}
