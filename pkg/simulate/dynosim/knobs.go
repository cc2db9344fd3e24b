package dynosim

import (
	"fmt"
	"strconv"
	"strings"
)

// engineKnobs is what the export reads about one worker set: its fields,
// else its engine command line, else a default.
type engineKnobs struct {
	tp, pp, dp         int
	maxSeqs, maxTokens uint64
	memFraction        float64
	prefixCaching      *bool
	ctxLen             int
	notes              []string
}

// The engine flags read per backend (Dynamo's vLLM, SGLang and TensorRT-LLM
// workers pass these through to the engine).
var (
	flagsTP = map[string][]string{
		"vllm":   {"--tensor-parallel-size", "-tp"},
		"sglang": {"--tp-size", "--tp", "--tensor-parallel-size"},
		"trtllm": {"--tensor-parallel-size"},
	}
	flagsPP = map[string][]string{
		"vllm":   {"--pipeline-parallel-size", "-pp"},
		"sglang": {"--pp-size", "--pipeline-parallel-size"},
		"trtllm": {"--pipeline-parallel-size"},
	}
	flagsDP = map[string][]string{
		"vllm":   {"--data-parallel-size", "-dp"},
		"sglang": {"--dp-size", "--dp", "--data-parallel-size"},
	}
	flagsMaxSeqs = map[string][]string{
		"vllm":   {"--max-num-seqs"},
		"sglang": {"--max-running-requests"},
		"trtllm": {"--max-batch-size"},
	}
	flagsMaxTokens = map[string][]string{
		"vllm":   {"--max-num-batched-tokens"},
		"trtllm": {"--max-num-tokens"},
	}
	flagsMemFraction = map[string][]string{
		"vllm":   {"--gpu-memory-utilization"},
		"sglang": {"--mem-fraction-static"},
		"trtllm": {"--free-gpu-memory-fraction"},
	}
	flagsContext = map[string][]string{
		"vllm":   {"--max-model-len"},
		"sglang": {"--context-length"},
		"trtllm": {"--max-seq-len"},
	}
	flagsBlockSize = map[string][]string{
		"vllm":   {"--block-size"},
		"sglang": {"--page-size"},
		"trtllm": {"--kv-block-size"},
	}
	flagsModel = []string{"--model", "--model-path"}
)

// readKnobs resolves a worker set's engine knobs.
func readKnobs(backend string, ws *WorkerSet) engineKnobs {
	words := ws.Args
	k := engineKnobs{tp: ws.TensorParallel, pp: ws.PipelineParallel, dp: ws.DataParallel,
		maxSeqs: ws.MaxNumSeqs, maxTokens: ws.MaxNumBatchedTokens, memFraction: ws.MemoryFraction,
		prefixCaching: ws.PrefixCaching, ctxLen: ws.ContextLength}
	name := nameOr(ws.Component)
	if k.tp == 0 {
		k.tp = intFlag(words, flagsTP[backend]...)
	}
	if k.pp == 0 {
		k.pp = intFlag(words, flagsPP[backend]...)
	}
	if k.dp == 0 {
		k.dp = intFlag(words, flagsDP[backend]...)
	}
	// SGLang's DP attention splits the tensor-parallel group into dp attention
	// ranks: --tp 8 --dp 8 --enable-dp-attention is 8 GPUs, not 64.
	if backend == "sglang" && hasFlag(words, "--enable-dp-attention") && k.dp > 1 && k.tp >= k.dp && k.tp%k.dp == 0 && ws.TensorParallel == 0 {
		k.tp /= k.dp
	}
	k.pp = max(1, k.pp)
	k.dp = max(1, k.dp)
	if k.tp == 0 {
		if g := ws.GPUsPerReplica; g > 0 && g%int64(k.pp*k.dp) == 0 {
			k.tp = int(g / int64(k.pp*k.dp))
			k.notes = append(k.notes, fmt.Sprintf("parallelism: %s's tensor-parallel size is not on its command line; %d is assumed from its %d GPUs per replica", name, k.tp, g))
		} else {
			k.tp = 1
			k.notes = append(k.notes, fmt.Sprintf("parallelism: %s's tensor-parallel size is unknown; 1 is assumed", name))
		}
		if backend == "trtllm" && hasFlag(words, "--extra-engine-args") {
			k.notes = append(k.notes, fmt.Sprintf("parallelism: %s reads its TensorRT-LLM engine settings from an --extra-engine-args file, which kubectl-dynamo cannot read", name))
		}
	}
	if k.maxSeqs == 0 {
		k.maxSeqs = uint64(intFlag(words, flagsMaxSeqs[backend]...))
	}
	if k.maxTokens == 0 {
		k.maxTokens = uint64(intFlag(words, flagsMaxTokens[backend]...))
	}
	if k.memFraction == 0 {
		if v, ok := flag(words, flagsMemFraction[backend]...); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f <= 1 {
				k.memFraction = f
			}
		}
	}
	if k.ctxLen == 0 {
		k.ctxLen = intFlag(words, flagsContext[backend]...)
	}
	if k.prefixCaching == nil {
		switch backend {
		case "vllm", "trtllm":
			if v, set := boolFlag(words, "--enable-prefix-caching", "--no-enable-prefix-caching"); set {
				k.prefixCaching = &v
			}
		case "sglang":
			if hasFlag(words, "--disable-radix-cache") {
				f := false
				k.prefixCaching = &f
			}
		}
	}
	return k
}

// flag returns the value of the last occurrence of any of the flags
// (--flag value or --flag=value).
func flag(words []string, names ...string) (string, bool) {
	val, found := "", false
	for i, w := range words {
		name, v, inline := strings.Cut(w, "=")
		for _, n := range names {
			if name != n {
				continue
			}
			switch {
			case inline:
				val, found = v, true
			case i+1 < len(words) && !strings.HasPrefix(words[i+1], "-"):
				val, found = words[i+1], true
			}
		}
	}
	return val, found
}

// intFlag is flag parsed as a positive integer (0 when absent or invalid).
func intFlag(words []string, names ...string) int {
	v, ok := flag(words, names...)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 || n > 1<<24 {
		return 0
	}
	return n
}

func hasFlag(words []string, name string) bool {
	for _, w := range words {
		if n, _, _ := strings.Cut(w, "="); n == name {
			return true
		}
	}
	return false
}

// boolFlag reads a negatable boolean flag: the last of --on, --on=VALUE and
// --off wins.
func boolFlag(words []string, on, off string) (value, set bool) {
	for _, w := range words {
		name, v, inline := strings.Cut(w, "=")
		switch name {
		case on:
			value, set = !inline || isTrue(v), true
		case off:
			value, set = false, true
		}
	}
	return value, set
}

func isTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on", "y", "t":
		return true
	}
	return false
}
