package cmdutil

import (
	"fmt"
	"io"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/boundedyaml"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/fileio"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// ReadCaptureFile reads a capture or manifest file named by the flag what
// (--from-file, --nodes-from, -f) through the one input opener (a regular
// file or standard input, at most capture.MaxBytes), refuses YAML
// whose anchors and aliases expand beyond the bound proportional to its size
// (boundedyaml.Check), and parses it. Errors name the flag and the file.
func ReadCaptureFile(in io.Reader, name, what string) (*raw.Bundle, error) {
	return readCaptureFile(in, name, what, false)
}

// ReadCaptureFileWhole is ReadCaptureFile that also keeps every Kubernetes
// object whole, as read (capture.ParseWhole, Bundle.AsRead): for preflight,
// which checks manifests and nodes whole.
func ReadCaptureFileWhole(in io.Reader, name, what string) (*raw.Bundle, error) {
	return readCaptureFile(in, name, what, true)
}

func readCaptureFile(in io.Reader, name, what string, whole bool) (*raw.Bundle, error) {
	input, err := fileio.Open(in, name, what, capture.MaxBytes)
	if err != nil {
		return nil, err
	}
	defer input.Close()
	// A regular file holding a JSON capture is read streaming, from the one
	// descriptor opened above (JSON has no anchors or aliases to bound);
	// anything else is read whole and decided by capture.Parse.
	if !whole && !input.Stream() {
		if b, ok := capture.ReadStreaming(input.NewReader(), input.Info().Size(), name); ok {
			return b, nil
		}
	}
	data, err := input.Bytes()
	if err != nil {
		return nil, err
	}
	if err := boundedyaml.Check(data); err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, name, err)
	}
	parse := capture.Parse
	if whole {
		parse = capture.ParseWhole
	}
	b, err := parse(data, name)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, name, err)
	}
	return b, nil
}

// NamedInput is an input path and the flag that names it.
type NamedInput struct {
	Flag, Path string
}

// OneStdin refuses, before anything is read, two inputs that would both read
// standard input ("-", /dev/stdin, /dev/fd/0): the second would find it
// empty.
func OneStdin(inputs ...NamedInput) error {
	first := ""
	for _, in := range inputs {
		if in.Path == "" || !fileio.IsStdin(in.Path) {
			continue
		}
		if first != "" {
			return FlagErrorf("%s and %s both read standard input, which can be read only once: give one of them as a file", first, in.Flag+" "+in.Path)
		}
		first = in.Flag + " " + in.Path
	}
	return nil
}
