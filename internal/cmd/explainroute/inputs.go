package explainroute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tokenizer"
)

// liveSource reads a live deployment and reaches its frontend.
type liveSource struct {
	opts source.CollectOptions
	api  kube.API
	http *http.Client
}

// newLiveSource wraps cmdutil's live options (one Kubernetes client, the
// SSRF-safe HTTP client) for the frontend and indexer reads.
func newLiveSource(opts source.CollectOptions) *liveSource {
	return &liveSource{opts: opts, api: opts.Kube, http: opts.HTTPClient}
}

func (l *liveSource) collect(ctx context.Context) (*raw.Bundle, error) {
	return source.Collect(ctx, l.opts)
}

// frontend returns the deployment's frontend target and the options to reach it.
func (l *liveSource) frontend(b *raw.Bundle, dep *model.Deployment, timeout time.Duration) (frontend.Target, frontend.Options, bool) {
	fo := frontend.Options{API: l.api, HTTPClient: l.http, Timeout: timeout, Now: l.opts.Now}
	if l.opts.FrontendURL != "" {
		return frontend.Target{Namespace: dep.Namespace, Deployment: dep.Name, URL: l.opts.FrontendURL}, fo, true
	}
	targets, _ := frontend.Targets(b.Objects)
	for _, t := range targets {
		if t.Namespace == dep.Namespace && t.Deployment == dep.Name {
			return t, fo, true
		}
	}
	return frontend.Target{}, fo, false
}

// resolveRequest produces the token ids: given, from the frontend's /tokenize,
// or from a local tokenizer. Notes say what fell back to what.
func (o *Options) resolveRequest(ctx context.Context, b *raw.Bundle, dep *model.Deployment) (explain.Request, []string, error) {
	r := o.request
	var notes []string
	switch {
	case o.cmd.Flags().Changed("tokens"):
		toks, err := cmdutil.ParseTokenList([]byte(o.Tokens), "--tokens")
		if err != nil {
			return r, nil, cmdutil.FlagErrorf("%v", err)
		}
		r.Tokens, r.Tokenizer = toks, "token ids from --tokens"
		return r, nil, nil
	case o.TokenFile != "":
		data, err := cmdutil.ReadInputLimit(o.IO.In, o.TokenFile, "--token-file", 256<<20)
		if err != nil {
			return r, nil, err
		}
		toks, err := cmdutil.ParseTokenList(data, "--token-file "+o.TokenFile)
		if err != nil {
			return r, nil, err
		}
		r.Tokens, r.Tokenizer = toks, "token ids from --token-file "+o.TokenFile
		return r, nil, nil
	}
	prompt, messages, err := o.promptText()
	if err != nil {
		return r, nil, err
	}
	model := modelOf(dep)
	var frontendErr error
	// Live: the frontend tokenizes exactly (chat template included).
	if o.live != nil && o.Tokenizer == "" {
		t, fo, ok := o.live.frontend(b, dep, o.FrontendTokTO)
		switch {
		case o.Sources.NoFrontend:
			notes = append(notes, "--no-frontend: the prompt was tokenized locally, not by the frontend")
		case !ok:
			notes = append(notes, "no frontend Service found for "+dep.Key()+": the prompt was tokenized locally (pass --frontend-url to use the frontend's /tokenize)")
		default:
			res, err := fo.Tokenize(ctx, t, frontend.TokenizeRequest{Model: model, Prompt: prompt, Messages: messages, AddSpecialTokens: o.addSpecial()})
			if err == nil {
				if len(res.Tokens) == 0 {
					return r, nil, cmdutil.FlagErrorf("the frontend tokenized the prompt into no tokens: give a non-empty prompt")
				}
				r.Tokens, r.Tokenizer = res.Tokens, res.Source
				return r, notes, nil
			}
			if messages != nil {
				return r, nil, cmdutil.WithHint(fmt.Errorf("--messages: the frontend could not tokenize the chat: %w", err),
					"Render the chat template yourself and pass --prompt, or pass --tokens")
			}
			notes = append(notes, "the frontend's /tokenize failed ("+err.Error()+"), so the prompt was tokenized locally")
			frontendErr = err
		}
	}
	if messages != nil {
		return r, nil, cmdutil.WithHint(errors.New("--messages needs the frontend's POST /tokenize to apply the model's chat template, and it is not reachable"),
			"Pass --frontend-url, or render the prompt and use --prompt/--tokens")
	}
	// withTried prefixes a local-tokenizer error with the frontend failure that
	// led to it, so the user learns both.
	withTried := func(err error) error {
		if frontendErr == nil {
			return err
		}
		return fmt.Errorf("the frontend's /tokenize failed (%w), and %w", frontendErr, err)
	}
	ref := o.Tokenizer
	how := "--tokenizer"
	if ref == "" {
		if model == "" {
			return r, nil, cmdutil.WithHint(withTried(errors.New("cannot tokenize the prompt: no worker card names the model and no --tokenizer was given")),
				"Pass --tokenizer tokenizer.json (or an org/model id in your Hugging Face cache), or --tokens")
		}
		ref, how = model, "the model "+model+" in the local Hugging Face cache"
	}
	resolve := tokenizer.Resolve
	if o.Tokenizer == "" {
		// The model name comes from a worker card: cluster data, so only a
		// Hugging Face cache id, never a path.
		resolve = tokenizer.ResolveModelID
	}
	src, err := resolve(ref, o.Getenv)
	if err != nil {
		return r, nil, cmdutil.WithHint(withTried(fmt.Errorf("cannot tokenize the prompt with %s: %w", how, err)),
			"Pass --tokenizer PATH/tokenizer.json (e.g. from huggingface-cli download), or --tokens")
	}
	tok, err := tokenizer.Load(src.Path)
	if err != nil {
		return r, nil, fmt.Errorf("load tokenizer %s: %w", src.Path, err)
	}
	toks, err := tok.Encode(prompt, o.AddSpecialTokens)
	if err != nil {
		return r, nil, fmt.Errorf("tokenize the prompt: %w", err)
	}
	if len(toks) == 0 {
		return r, nil, cmdutil.FlagErrorf("the prompt tokenizes into no tokens: give a non-empty prompt")
	}
	r.Tokens = toks
	r.Tokenizer = "local tokenizer " + src.String()
	if !o.AddSpecialTokens {
		r.Tokenizer += " (no special tokens)"
	}
	return r, notes, nil
}

func (o *Options) addSpecial() *bool {
	if !o.cmd.Flags().Changed("add-special-tokens") {
		return nil
	}
	v := o.AddSpecialTokens
	return &v
}

// promptText reads --prompt, --prompt-file or --messages.
func (o *Options) promptText() (string, json.RawMessage, error) {
	switch {
	case o.PromptFile != "":
		data, err := cmdutil.ReadInputLimit(o.IO.In, o.PromptFile, "--prompt-file", 64<<20)
		if err != nil {
			return "", nil, err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return "", nil, cmdutil.FlagErrorf("--prompt-file %s is empty: the router cannot route an empty prompt", o.PromptFile)
		}
		return string(data), nil, nil
	case o.MessagesFile != "":
		data, err := cmdutil.ReadInputLimit(o.IO.In, o.MessagesFile, "--messages", 64<<20)
		if err != nil {
			return "", nil, err
		}
		msgs, err := parseMessages(data)
		if err != nil {
			return "", nil, cmdutil.FlagErrorf("--messages %s: %v", o.MessagesFile, err)
		}
		return "", msgs, nil
	}
	if o.Prompt == "" {
		return "", nil, cmdutil.FlagErrorf("--prompt is empty: the router cannot route an empty prompt")
	}
	return o.Prompt, nil, nil
}

// parseMessages accepts an array of chat messages or an object with "messages".
func parseMessages(data []byte) (json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var obj struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		if obj.Messages == nil {
			return nil, errors.New(`an object must hold "messages": [...]`)
		}
		data = obj.Messages
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(data, &msgs); err != nil {
		return nil, fmt.Errorf("want a JSON array of chat messages ({\"role\": …, \"content\": …}): %w", err)
	}
	if len(msgs) == 0 {
		return nil, errors.New("holds no messages")
	}
	for i, m := range msgs {
		if _, ok := m["role"]; !ok {
			return nil, fmt.Errorf("message %d has no \"role\"", i)
		}
	}
	return json.RawMessage(data), nil
}

func modelOf(dep *model.Deployment) string {
	model := ""
	for _, w := range dep.Workers {
		for _, in := range w.Instances {
			if in.Model != "" && (model == "" || in.Model < model) {
				model = in.Model
			}
		}
	}
	return model
}

// resolveKV reads the KV-cache contents: --cold, a standalone indexer, the
// frontend's placements stream, or the capture's KvEvents.
func (o *Options) resolveKV(ctx context.Context, b *raw.Bundle, dep *model.Deployment, req explain.Request) (explain.KVCache, []string, error) {
	if o.Cold {
		return explain.KVCache{Kind: explain.KVCold, Detail: "cold: no cached blocks assumed (--cold)"}, nil, nil
	}
	blockSize := o.BlockSize
	if bs := deploymentBlockSize(dep); bs > 0 {
		blockSize = bs
	}
	if o.live == nil {
		sets := explain.BundleEventSets(b, dep)
		if len(sets) == 0 {
			return explain.KVCache{Kind: explain.KVCold, Detail: "cold: the capture holds no KvEvents for " + dep.Key()}, nil, nil
		}
		ix, notes := o.indexAhead.Take(sets, dep, blockSize)
		names := make([]string, 0, len(sets))
		for _, s := range sets {
			names = append(names, s.Name)
		}
		return explain.IndexCache(ix, "capture KvEvents ("+strings.Join(names, ", ")+")", b.CollectedAt), notes, nil
	}
	if o.IndexerURL != "" {
		res, err := frontend.QueryIndexer(ctx, o.live.http, o.IndexerURL, frontend.IndexerQuery{
			TokenIDs: req.Tokens, ModelName: modelOf(dep), RoutingGroup: o.IndexerGroup, LoraName: req.LoraName, CacheSalt: req.CacheNamespace,
		}, frontend.IndexerOptions{Timeout: o.KVTimeout})
		if err != nil {
			return explain.KVCache{}, nil, cmdutil.WithHint(fmt.Errorf("--indexer-url: %w", err), "Check the indexer URL, or drop --indexer-url to use the frontend's placements stream (--cold assumes an empty cache)")
		}
		return explain.KVCache{Kind: explain.KVIndexer, IndexerTokens: res.Tokens, Detail: res.Source, At: res.At}, nil, nil
	}
	t, fo, ok := o.live.frontend(b, dep, o.KVTimeout)
	switch {
	case o.Sources.NoFrontend:
		return explain.KVCache{Kind: explain.KVCold, Detail: "cold: --no-frontend, so the KV-cache contents were not read"}, nil, nil
	case !ok:
		return explain.KVCache{Kind: explain.KVCold, Detail: "cold: no frontend Service found, so the KV-cache contents were not read"},
			[]string{"KV cache assumed cold: no frontend Service for " + dep.Key() + " (pass --frontend-url or --indexer-url)"}, nil
	}
	fo.PlacementTimeout = o.KVTimeout
	snap, err := fo.ReadPlacements(ctx, t)
	if err != nil {
		// Degrade, do not fail: the dry run is still meaningful without overlaps.
		return coldAfter(err)
	}
	sets := explain.PlacementEventSets(snap, dep)
	ix, notes := explain.IndexEvents(sets, blockSize)
	kv := explain.IndexCache(ix, snap.Source, snap.At)
	if !snap.Complete {
		kv.Incomplete = "the frontend marked the snapshot incomplete"
	}
	if len(snap.Errors) > 0 {
		notes = append(notes, "placements stream reported: "+strings.Join(snap.Errors, "; "))
	}
	return kv, notes, nil
}

func deploymentBlockSize(dep *model.Deployment) int {
	for _, w := range dep.Workers {
		for _, in := range w.Instances {
			if in.BlockSize > 0 {
				return in.BlockSize
			}
		}
	}
	return 0
}

func jsonDecoder(data []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec
}

func asInputErr(err error, target **explain.InputError) bool {
	return errors.As(err, target)
}

// coldAfter is the KV cache when the placements stream could not be read.
func coldAfter(err error) (explain.KVCache, []string, error) {
	return explain.KVCache{Kind: explain.KVCold, Detail: "cold: the placements stream could not be read"},
		[]string{"KV cache assumed cold: " + err.Error() + " (--kv-timeout bounds the wait; use --indexer-url if a standalone indexer runs, or --cold to silence this)"}, nil
}
