package explainroute

import (
	"github.com/spf13/pflag"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
)

// multimodalFlags are the request's multimodal objects (--mm, --mm-file), the
// same flags as kubectl dynamo hash: each object's mm_hash and the token
// positions of its placeholder, which change the hashes of the blocks holding
// it and so the overlap every worker is credited with.
type multimodalFlags struct {
	Mm     []string
	MmFile string
}

func (m *multimodalFlags) addMultimodalFlags(fl *pflag.FlagSet) {
	fl.StringArrayVar(&m.Mm, "mm", nil, cmdutil.MultimodalHelp)
	fl.StringVar(&m.MmFile, "mm-file", "", cmdutil.MultimodalFileHelp)
}

// completeMultimodal reads the objects into the request.
func (o *Options) completeMultimodal(r *explain.Request) error {
	if len(o.Mm) == 0 && o.MmFile == "" {
		return nil
	}
	if o.MmFile == "-" {
		for flag, v := range map[string]string{"--from-file": o.FromFile, "--token-file": o.TokenFile, "--prompt-file": o.PromptFile, "--messages": o.MessagesFile} {
			if v == "-" {
				return cmdutil.FlagErrorf("--mm-file - and %s - cannot both read standard input", flag)
			}
		}
	}
	if o.IndexerURL != "" {
		// The indexer's POST /query takes token ids and hashes them as text.
		return cmdutil.FlagErrorf("--mm cannot be used with --indexer-url: the indexer query carries token ids only, so its overlaps are those of a text request")
	}
	m, err := cmdutil.ReadMultimodal(o.IO.In, o.Mm, o.MmFile)
	if err != nil {
		return err
	}
	r.Multimodal = m
	return nil
}
