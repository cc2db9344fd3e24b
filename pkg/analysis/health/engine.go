package health

import (
	"encoding/json"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Engines, as the worker's module names them (python3 -m dynamo.<engine>).
const (
	engineVLLM   = "vllm"
	engineSGLang = "sglang"
	engineTRTLLM = "trtllm"
)

var engineNames = map[string]string{engineVLLM: "vLLM", engineSGLang: "SGLang", engineTRTLLM: "TensorRT-LLM"}

// publishing is what a worker's command line says about KV-event publishing.
type publishing struct {
	engine string
	// known is false when the command line cannot tell (an unknown engine, or
	// engine args read from a file).
	known bool
	on    bool
	// why is the evidence, e.g. "no --kv-events-config".
	why string
	// card is set when the evidence is the worker's own model card
	// (kv_event_publishing_enabled false) rather than its command line.
	card bool
}

// cardPublishing reads what a replica's cards declare about KV-event
// publishing (runtime_config.kv_event_publishing_enabled, #12095): declared
// when any card says; on unless one says false (the router warns about each
// worker whose card says false).
func cardPublishing(r *replica) (declared, on bool) {
	on = true
	for _, in := range r.cards {
		if p := in.KvEventPublishing; p != nil {
			declared, on = true, on && *p
		}
	}
	return declared, on
}

// kvPublishing reads a worker's engine and KV-event flags from its command line:
//
//   - vLLM publishes only with --kv-events-config whose enable_kv_cache_events is
//     true (vLLM's KVEventsConfig defaults it to false), prefix caching on, and
//     not as a decode worker (components/src/dynamo/vllm/args.py
//     create_kv_events_config; llm_engine.py _kv_routing_enabled);
//   - SGLang publishes only with --kv-events-config (router-operations docs), and
//     has nothing to publish with --disable-radix-cache;
//   - TensorRT-LLM publishes only with --publish-kv-events (Dynamo 1.3.0+) or the
//     deprecated --publish-events-and-metrics, or their DYN_TRTLLM_* env
//     (components/src/dynamo/trtllm/args.py).
func kvPublishing(w *model.Worker) publishing {
	words := cmdline.CommandWords(w.Argv, w.Env)
	p := publishing{engine: engineOf(words)}
	switch p.engine {
	case engineVLLM:
		if v, set := cmdline.BoolFlag(words, "--enable-prefix-caching", "--no-enable-prefix-caching"); set && !v {
			return publishing{engine: p.engine, known: true, why: "--no-enable-prefix-caching (no prefix cache, no events)"}
		}
		val, ok := flagValue(words, "--kv-events-config", "--kv_events_config")
		if !ok {
			if _, file := flagValue(words, "--engine-config-json"); file {
				return p // the engine args are in a file this cannot read
			}
			return publishing{engine: p.engine, known: true, why: "no --kv-events-config"}
		}
		var cfg struct {
			Enable    *bool  `json:"enable_kv_cache_events"`
			Publisher string `json:"publisher"`
		}
		if json.Unmarshal([]byte(val), &cfg) != nil {
			return p
		}
		switch {
		case cfg.Enable == nil || !*cfg.Enable:
			return publishing{engine: p.engine, known: true, why: "--kv-events-config without \"enable_kv_cache_events\": true (vLLM's default is false)"}
		case cfg.Publisher == "null":
			return publishing{engine: p.engine, known: true, why: "--kv-events-config with \"publisher\": \"null\""}
		}
		return publishing{engine: p.engine, known: true, on: true}
	case engineSGLang:
		if has(words, "--disable-radix-cache") {
			return publishing{engine: p.engine, known: true, why: "--disable-radix-cache (no prefix cache, no events)"}
		}
		val, ok := flagValue(words, "--kv-events-config", "--kv_events_config")
		if !ok {
			return publishing{engine: p.engine, known: true, why: "no --kv-events-config"}
		}
		var cfg struct {
			Publisher string `json:"publisher"`
		}
		if json.Unmarshal([]byte(val), &cfg) == nil && cfg.Publisher == "null" {
			return publishing{engine: p.engine, known: true, why: "--kv-events-config with \"publisher\": \"null\""}
		}
		return publishing{engine: p.engine, known: true, on: true}
	case engineTRTLLM:
		if v, set := cmdline.BoolFlag(words, "--publish-kv-events", "--no-publish-kv-events"); set {
			return publishing{engine: p.engine, known: true, on: v, why: "--no-publish-kv-events"}
		}
		if v, set := cmdline.BoolFlag(words, "--publish-events-and-metrics", "--no-publish-events-and-metrics"); set {
			return publishing{engine: p.engine, known: true, on: v, why: "--no-publish-events-and-metrics"}
		}
		for _, name := range []string{"DYN_TRTLLM_PUBLISH_KV_EVENTS", "DYN_TRTLLM_PUBLISH_EVENTS_AND_METRICS"} {
			if v, ok := w.Env[name]; ok {
				on := cmdline.Truthy(v)
				return publishing{engine: p.engine, known: true, on: on, why: name + "=" + v}
			}
		}
		return publishing{engine: p.engine, known: true, why: "no --publish-kv-events (or --publish-events-and-metrics)"}
	}
	return p
}

// engineOf finds the Dynamo engine module in a command line ("" when none).
func engineOf(words []string) string {
	for _, w := range words {
		mod := strings.TrimSuffix(w, ".main")
		switch mod {
		case "dynamo.vllm", "dynamo.sglang", "dynamo.trtllm":
			return strings.TrimPrefix(mod, "dynamo.")
		}
	}
	return ""
}

// flagValue returns the value of the last occurrence of any of the flags
// (--flag value or --flag=value).
func flagValue(words []string, flags ...string) (string, bool) {
	val, found := "", false
	for i, w := range words {
		name, v, hasVal := strings.Cut(w, "=")
		for _, f := range flags {
			if name != f {
				continue
			}
			if hasVal {
				val, found = v, true
			} else if i+1 < len(words) {
				val, found = words[i+1], true
			}
		}
	}
	return val, found
}

func has(words []string, flag string) bool {
	_, ok := flagValue(words, flag)
	for _, w := range words {
		if w == flag {
			return true
		}
	}
	return ok
}
