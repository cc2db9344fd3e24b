package cmdutil

import (
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
)

// Factory carries the dependencies commands build on, as values and lazy
// constructors, so that nothing dials a cluster until a command asks for it and
// tests can substitute every part.
type Factory struct {
	// IOStreams are the process's streams (or test buffers).
	IOStreams *iostreams.IOStreams
	// ConfigFlags are the kubectl connection flags (--kubeconfig, --context, -n, …)
	// registered on the root command.
	ConfigFlags *genericclioptions.ConfigFlags
	// Now returns the current time; tests pin it.
	Now func() time.Time
}

// NewFactory returns a factory for the real process.
func NewFactory(streams *iostreams.IOStreams) *Factory {
	return &Factory{
		IOStreams:   streams,
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Now:         time.Now,
	}
}
