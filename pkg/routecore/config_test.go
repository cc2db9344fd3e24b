package routecore

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestDefaultKvRouterConfig(t *testing.T) {
	c := DefaultKvRouterConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults must validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"overlap_score_credit", c.OverlapScoreCredit, 1.0},
		{"overlap_score_credit_decay", c.OverlapScoreCreditDecay, 0.0},
		{"prefill_load_scale", c.PrefillLoadScale, 1.0},
		{"decode_active_request_weight", c.DecodeActiveRequestWeight, 0.0},
		{"host_cache_hit_weight", c.HostCacheHitWeight, 0.75},
		{"disk_cache_hit_weight", c.DiskCacheHitWeight, 0.25},
		{"router_temperature", c.RouterTemperature, 0.0},
		{"use_kv_events", c.UseKvEvents, true},
		{"router_replica_sync", c.RouterReplicaSync, false},
		{"router_track_active_blocks", c.RouterTrackActiveBlocks, true},
		{"router_track_output_blocks", c.RouterTrackOutputBlocks, false},
		{"router_assume_kv_reuse", c.RouterAssumeKvReuse, true},
		{"router_track_prefill_tokens", c.RouterTrackPrefillTokens, true},
		{"router_ttl_secs", c.RouterTTLSecs, 120.0},
		{"router_queue_threshold", c.RouterQueueThreshold == nil, true},
		{"router_event_threads", c.RouterEventThreads, uint32(4)},
		{"router_queue_policy", c.RouterQueuePolicy, QueuePolicyFCFS},
		{"shared_cache_multiplier", c.SharedCacheMultiplier, 0.0},
		{"shared_cache_type", c.SharedCacheType, SharedCacheNone},
		{"router_predicted_ttl_secs", c.RouterPredictedTTLSecs == nil, true},
		{"conditional_disagg_enabled", c.ConditionalDisaggEnabled, false},
		{"conditional_disagg_policy", c.ConditionalDisaggPolicy, ConditionalDisaggISLBounding},
		{"conditional_disagg_eff_isl_threshold", c.ConditionalDisaggEffISLThreshold, uint64(2048)},
		{"conditional_disagg_eff_isl_ratio_threshold", c.ConditionalDisaggEffISLRatioThreshold, 0.7},
		{"sita_boundary_1", c.SitaBoundary1, uint64(1024)},
		{"sita_boundary_2", c.SitaBoundary2, uint64(8192)},
		{"sita_small_band_share", c.SitaSmallBandShare, 0.5},
		{"sita_spill_threshold", c.SitaSpillThreshold, 0.85},
		{"profile", c.Profile, Profile("")},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestKvRouterConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*KvRouterConfig)
		wantErr string // a substring of the expected error, empty when the config is valid
	}{
		{"credit above one is fine in latest", func(c *KvRouterConfig) { c.OverlapScoreCredit = 1.5 }, ""},
		{"credit above one is rejected pre-clamp", func(c *KvRouterConfig) { c.OverlapScoreCredit = 1.5; c.Profile = ProfileLegacyV1_1 }, "between 0.0 and 1"},
		{"negative credit", func(c *KvRouterConfig) { c.OverlapScoreCredit = -0.1 }, "overlap_score_credit must be a finite, non-negative number"},
		{"NaN credit", func(c *KvRouterConfig) { c.OverlapScoreCredit = math.NaN() }, "overlap_score_credit must be a finite number"},
		{"infinite scale", func(c *KvRouterConfig) { c.PrefillLoadScale = math.Inf(1) }, "prefill_load_scale must be a finite number"},
		{"negative decay", func(c *KvRouterConfig) { c.OverlapScoreCreditDecay = -1 }, "overlap_score_credit_decay must be greater than or equal to 0"},
		{"negative request weight", func(c *KvRouterConfig) { c.DecodeActiveRequestWeight = -1 }, "decode_active_request_weight"},
		{"host weight above one", func(c *KvRouterConfig) { c.HostCacheHitWeight = 1.5 }, "host_cache_hit_weight must be between 0 and 1"},
		{"disk weight negative", func(c *KvRouterConfig) { c.DiskCacheHitWeight = -0.5 }, "disk_cache_hit_weight"},
		{"negative temperature", func(c *KvRouterConfig) { c.RouterTemperature = -1 }, "router_temperature"},
		{"shared multiplier above one", func(c *KvRouterConfig) { c.SharedCacheMultiplier = 2 }, "shared_cache_multiplier"},
		{"negative queue threshold", func(c *KvRouterConfig) { c.RouterQueueThreshold = selF(-1) }, "router_queue_threshold"},
		{"zero event threads", func(c *KvRouterConfig) { c.RouterEventThreads = 0 }, "router_event_threads must be at least 1"},
		{"unknown queue policy", func(c *KvRouterConfig) { c.RouterQueuePolicy = "lifo" }, "unknown router_queue_policy"},
		{"output blocks need active blocks", func(c *KvRouterConfig) { c.RouterTrackOutputBlocks = true; c.RouterTrackActiveBlocks = false }, "router_track_output_blocks requires"},
		{"aic needs prefill tracking", func(c *KvRouterConfig) {
			c.RouterPrefillLoadModel = PrefillLoadModelAIC
			c.RouterTrackPrefillTokens = false
		}, "router_prefill_load_model requires"},
		{"remote and serve indexer", func(c *KvRouterConfig) { c.UseRemoteIndexer = true; c.ServeIndexer = true }, "mutually exclusive"},
		{"serve indexer needs credit", func(c *KvRouterConfig) { c.ServeIndexer = true; c.OverlapScoreCredit = 0 }, "serve_indexer requires"},
		{"predicted ttl needs events", func(c *KvRouterConfig) { c.RouterPredictedTTLSecs = selF(5); c.UseKvEvents = false }, "router_predicted_ttl_secs requires"},
		{"prefill_load policy needs a threshold", func(c *KvRouterConfig) {
			c.ConditionalDisaggEnabled = true
			c.ConditionalDisaggPolicy = ConditionalDisaggPrefillLoad
		}, "needs prefill_busy_threshold"},
		{"prefill_load policy inherits the queue threshold", func(c *KvRouterConfig) {
			c.ConditionalDisaggEnabled = true
			c.ConditionalDisaggPolicy = ConditionalDisaggISLOrLoad
			c.RouterQueueThreshold = selF(2)
		}, ""},
		{"sita boundaries", func(c *KvRouterConfig) { c.SitaBoundary2 = 10 }, "sita_boundary_2"},
		{"sita share", func(c *KvRouterConfig) { c.SitaSmallBandShare = 1 }, "sita_small_band_share"},
		{"unknown profile", func(c *KvRouterConfig) { c.Profile = "v0" }, "unknown profile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := selCfg(tt.mod)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestProfiles(t *testing.T) {
	for _, name := range []string{"", "latest", "LATEST", "legacy-v1.1", "pre-clamp", "legacy-tree-size"} {
		if _, err := ParseProfile(name); err != nil {
			t.Errorf("ParseProfile(%q): %v", name, err)
		}
	}
	latest, _ := Profile("").Behavior()
	legacy, _ := ProfileLegacyV1_1.Behavior()
	if !latest.ClampAdjustedPrefill || !latest.DecodeOverlapBranch || !math.IsInf(latest.MaxOverlapScoreCredit, 1) || latest.Name != ProfileLatest {
		t.Errorf("latest behaviour %+v", latest)
	}
	if legacy.ClampAdjustedPrefill || legacy.DecodeOverlapBranch || legacy.MaxOverlapScoreCredit != 1 || legacy.RequestBlocksAtLeastOne {
		t.Errorf("legacy behaviour %+v", legacy)
	}
	if len(Profiles()) != 4 {
		t.Errorf("profiles %v", Profiles())
	}
	// The multimodal scheme: pad values from #10328 (1.3) on; legacy-v1.2 is
	// latest in everything else.
	v12, err := ProfileLegacyV1_2.Behavior()
	if err != nil {
		t.Fatal(err)
	}
	wantV12 := latest
	wantV12.Name, wantV12.MmScheme = ProfileLegacyV1_2, MmSchemeMmHash
	if v12 != wantV12 || latest.MmScheme != MmSchemePadValue || legacy.MmScheme != MmSchemeMmHash {
		t.Errorf("multimodal schemes: latest %q, legacy-v1.2 %+v, legacy-v1.1 %q", latest.MmScheme, v12, legacy.MmScheme)
	}
	for _, p := range Profiles() {
		if got, err := ParseProfile(string(p)); err != nil || got != p {
			t.Errorf("ParseProfile(%q) = %q, %v", p, got, err)
		}
	}
}

func TestRouterConfigOverride(t *testing.T) {
	cfg := DefaultKvRouterConfig()
	tests := []struct {
		name    string
		o       RouterConfigOverride
		wantErr string
		check   func(t *testing.T, w ResolvedWeights)
	}{
		{"empty keeps the config", RouterConfigOverride{}, "", func(t *testing.T, w ResolvedWeights) {
			if w.OverlapScoreCredit != 1 || w.PrefillLoadScale != 1 || !w.TrackPrefillTokens || !w.AssumeKvReuse || w.Temperature != 0 {
				t.Errorf("%+v", w)
			}
		}},
		{"decode override", RouterConfigOverride{OverlapScoreCredit: selF(0), AssumeKvReuse: selB(false), TrackPrefillTokens: selB(false)}, "",
			func(t *testing.T, w ResolvedWeights) {
				if w.OverlapScoreCredit != 0 || w.AssumeKvReuse || w.TrackPrefillTokens {
					t.Errorf("%+v", w)
				}
			}},
		{"legacy weight 2 scales prefill and keeps credit", RouterConfigOverride{OverlapScoreWeight: selF(2)}, "",
			func(t *testing.T, w ResolvedWeights) {
				if w.PrefillLoadScale != 2 || w.OverlapScoreCredit != 1 {
					t.Errorf("%+v", w)
				}
			}},
		{"legacy weight 0 zeroes scale and credit", RouterConfigOverride{OverlapScoreWeight: selF(0), OverlapScoreCredit: selF(0.5)}, "",
			func(t *testing.T, w ResolvedWeights) {
				if w.PrefillLoadScale != 0 || w.OverlapScoreCredit != 0 {
					t.Errorf("%+v", w)
				}
			}},
		{"legacy weight wins over an explicit scale", RouterConfigOverride{OverlapScoreWeight: selF(3), PrefillLoadScale: selF(1)}, "",
			func(t *testing.T, w ResolvedWeights) {
				if w.PrefillLoadScale != 3 {
					t.Errorf("%+v", w)
				}
			}},
		{"negative credit", RouterConfigOverride{OverlapScoreCredit: selF(-1)}, "overlap_score_credit", nil},
		{"negative scale", RouterConfigOverride{PrefillLoadScale: selF(-1)}, "prefill_load_scale", nil},
		{"negative legacy weight", RouterConfigOverride{OverlapScoreWeight: selF(-1)}, "prefill_load_scale", nil},
		{"negative temperature", RouterConfigOverride{RouterTemperature: selF(-0.1)}, "router_temperature", nil},
		{"NaN temperature", RouterConfigOverride{RouterTemperature: selF(math.NaN())}, "router_temperature", nil},
		{"shared multiplier above one", RouterConfigOverride{SharedCacheMultiplier: selF(1.1)}, "shared_cache_multiplier must be between 0 and 1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate(ProfileLatest)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidOverride) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, tt.o.Resolve(cfg))
		})
	}
	if !(RouterConfigOverride{}).IsEmpty() || (RouterConfigOverride{AssumeKvReuse: selB(true)}).IsEmpty() {
		t.Errorf("IsEmpty")
	}
}

func TestDecodeRouterConfigJSON(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		wantErr string
		check   func(t *testing.T, d RouterConfigDoc)
	}{
		{"bare object with defaults", `{"overlap_score_credit": 0.5, "router_temperature": 0.25}`, "", func(t *testing.T, d RouterConfigDoc) {
			if d.Config.OverlapScoreCredit != 0.5 || d.Config.RouterTemperature != 0.25 || d.Config.PrefillLoadScale != 1 || !d.HasKvRouterConfig {
				t.Errorf("%+v", d.Config)
			}
		}},
		{"model card wrapper", `{"router_mode":"kv","kv_router_config":{"prefill_load_scale":2,"router_queue_threshold":null},
			"load_threshold_config":{"active_decode_blocks_threshold":0.9,"active_prefill_tokens_threshold":1000}}`, "",
			func(t *testing.T, d RouterConfigDoc) {
				if d.RouterMode != "kv" || d.Config.PrefillLoadScale != 2 || !d.HasKvRouterConfig ||
					*d.Thresholds.ActiveDecodeBlocksThreshold != 0.9 || *d.Thresholds.ActivePrefillTokensThreshold != 1000 {
					t.Errorf("%+v", d)
				}
			}},
		{"wrapper without kv_router_config", `{"router_mode":"round-robin"}`, "", func(t *testing.T, d RouterConfigDoc) {
			if d.HasKvRouterConfig || d.Config.OverlapScoreCredit != 1 {
				t.Errorf("%+v", d)
			}
		}},
		{"legacy overlap_score_weight", `{"overlap_score_weight": 0, "router_snapshot_threshold": 1000000, "durable_kv_events": false}`, "",
			func(t *testing.T, d RouterConfigDoc) {
				if d.Config.OverlapScoreCredit != 0 || d.Config.PrefillLoadScale != 0 ||
					!slices.Equal(d.Ignored, []string{"durable_kv_events", "router_snapshot_threshold"}) {
					t.Errorf("%+v", d)
				}
			}},
		{"legacy weight 2", `{"kv_router_config":{"overlap_score_weight": 2}}`, "", func(t *testing.T, d RouterConfigDoc) {
			if d.Config.OverlapScoreCredit != 1 || d.Config.PrefillLoadScale != 2 {
				t.Errorf("%+v", d.Config)
			}
		}},
		{"unknown fields are reported", `{"kv_router_config":{"brand_new_knob":1},"extra":true}`, "", func(t *testing.T, d RouterConfigDoc) {
			if !slices.Equal(d.Unknown, []string{"extra", "kv_router_config.brand_new_knob"}) {
				t.Errorf("unknown %v", d.Unknown)
			}
		}},
		{"optional fields", `{"router_queue_threshold": 4.5, "conditional_disagg_decode_busy_threshold": null, "router_event_threads": 2}`, "",
			func(t *testing.T, d RouterConfigDoc) {
				if *d.Config.RouterQueueThreshold != 4.5 || d.Config.ConditionalDisaggDecodeBusyThreshold != nil || d.Config.RouterEventThreads != 2 {
					t.Errorf("%+v", d.Config)
				}
			}},
		{"null for a required field", `{"prefill_load_scale": null}`, "prefill_load_scale must be a number", nil},
		{"wrong type", `{"use_kv_events": "yes"}`, "use_kv_events must be true or false", nil},
		{"negative integer", `{"router_event_threads": -1}`, "router_event_threads must be a non-negative integer", nil},
		{"validation runs", `{"overlap_score_credit": -1}`, "overlap_score_credit", nil},
		{"bad threshold", `{"load_threshold_config":{"active_decode_blocks_threshold": 2}}`, "active_decode_blocks_threshold", nil},
		{"not an object", `[1,2]`, "must be a JSON object", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodeRouterConfigJSON([]byte(tt.json))
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, d)
		})
	}
}

func selEnv(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseFrontendSettings(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     func(string) (string, bool)
		wantErr string
		check   func(t *testing.T, s FrontendSettings)
	}{
		{"defaults", nil, nil, "", func(t *testing.T, s FrontendSettings) {
			if s.RouterMode != "round-robin" || s.Config.OverlapScoreCredit != 1 || s.Thresholds.IsConfigured() {
				t.Errorf("%+v", s)
			}
		}},
		{"env values", nil, selEnv("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT", "0.5", "DYN_ROUTER_TEMPERATURE", "1e-1",
			"DYN_ROUTER_USE_KV_EVENTS", " OFF ", "DYN_ROUTER_MODE", "kv", "DYN_ACTIVE_DECODE_BLOCKS_THRESHOLD", "0.85",
			"DYN_ACTIVE_PREFILL_TOKENS_THRESHOLD", "+5000", "DYN_ROUTER_QUEUE_THRESHOLD", "None"), "",
			func(t *testing.T, s FrontendSettings) {
				if s.Config.OverlapScoreCredit != 0.5 || s.Config.RouterTemperature != 0.1 || s.Config.UseKvEvents || s.RouterMode != "kv" ||
					*s.Thresholds.ActiveDecodeBlocksThreshold != 0.85 || *s.Thresholds.ActivePrefillTokensThreshold != 5000 ||
					s.Config.RouterQueueThreshold != nil || len(s.Warnings) != 0 {
					t.Errorf("%+v", s)
				}
			}},
		{"unparsable env values are ignored with a warning", nil,
			selEnv("DYN_ROUTER_PREFILL_LOAD_SCALE", "abc", "DYN_ROUTER_TRACK_ACTIVE_BLOCKS", "maybe", "DYN_ROUTER_REPLICA_SYNC", "", "DYN_ROUTER_TEMPERATURE", "0x1p-2"), "",
			func(t *testing.T, s FrontendSettings) {
				if s.Config.PrefillLoadScale != 1 || !s.Config.RouterTrackActiveBlocks || s.Config.RouterTemperature != 0 || len(s.Warnings) != 4 {
					t.Errorf("%+v", s)
				}
			}},
		{"CLI wins over env", []string{"-m", "dynamo.frontend", "--router-kv-overlap-score-credit", "0.25", "--router-temperature=0.7", "--no-router-track-prefill-tokens"},
			selEnv("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT", "0.9", "DYN_ROUTER_TEMPERATURE", "0.1", "DYN_ROUTER_TRACK_PREFILL_TOKENS", "true"), "",
			func(t *testing.T, s FrontendSettings) {
				if s.Config.OverlapScoreCredit != 0.25 || s.Config.RouterTemperature != 0.7 || s.Config.RouterTrackPrefillTokens {
					t.Errorf("%+v", s.Config)
				}
			}},
		{"alias env DYN_USE_KV_EVENTS", nil, selEnv("DYN_USE_KV_EVENTS", "false"), "", func(t *testing.T, s FrontendSettings) {
			if s.Config.UseKvEvents {
				t.Errorf("use_kv_events should be false")
			}
		}},
		{"legacy weight flag", []string{"--kv-overlap-score-weight", "0"}, nil, "", func(t *testing.T, s FrontendSettings) {
			if s.Config.OverlapScoreCredit != 0 || s.Config.PrefillLoadScale != 0 || len(s.Warnings) != 1 {
				t.Errorf("%+v", s)
			}
		}},
		{"legacy weight env", nil, selEnv("DYN_OVERLAP_SCORE_WEIGHT", "2"), "", func(t *testing.T, s FrontendSettings) {
			if s.Config.OverlapScoreCredit != 1 || s.Config.PrefillLoadScale != 2 {
				t.Errorf("%+v", s.Config)
			}
		}},
		{"load-aware preset", []string{"--load-aware", "--router-prefill-load-scale", "3"}, nil, "", func(t *testing.T, s FrontendSettings) {
			c := s.Config
			if s.RouterMode != "kv" || c.OverlapScoreCredit != 0 || c.UseKvEvents || c.RouterAssumeKvReuse || c.PrefillLoadScale != 3 {
				t.Errorf("%+v", s)
			}
		}},
		{"shared cache type implies 0.5", []string{"--shared-cache-type", "hicache"}, nil, "", func(t *testing.T, s FrontendSettings) {
			if s.Config.SharedCacheMultiplier != 0.5 {
				t.Errorf("multiplier %v", s.Config.SharedCacheMultiplier)
			}
		}},
		{"explicit shared multiplier is kept", []string{"--shared-cache-type=hicache", "--shared-cache-multiplier=0.2"}, nil, "", func(t *testing.T, s FrontendSettings) {
			if s.Config.SharedCacheMultiplier != 0.2 {
				t.Errorf("multiplier %v", s.Config.SharedCacheMultiplier)
			}
		}},
		{"conditional disagg config", []string{"--router-conditional-disagg", "--router-conditional-disagg-config",
			`{"policy":"prefill_load","prefill_busy_threshold":0.5,"eff_isl_threshold":1024}`}, nil, "",
			func(t *testing.T, s FrontendSettings) {
				c := s.Config
				if !c.ConditionalDisaggEnabled || c.ConditionalDisaggPolicy != ConditionalDisaggPrefillLoad ||
					*c.ConditionalDisaggPrefillBusyThreshold != 0.5 || c.ConditionalDisaggEffISLThreshold != 1024 {
					t.Errorf("%+v", c)
				}
			}},
		{"conditional disagg config needs the flag", []string{"--router-conditional-disagg-config", `{"policy":"isl_bounding"}`}, nil,
			"requires --router-conditional-disagg", nil},
		{"conditional disagg config unknown field", []string{"--router-conditional-disagg", "--router-conditional-disagg-config", `{"pol":1}`}, nil,
			"unknown field", nil},
		{"bad CLI number is an error", []string{"--router-temperature", "hot"}, nil, "--router-temperature", nil},
		{"missing CLI value", []string{"--router-temperature"}, nil, "needs a value", nil},
		{"negated flag takes no value", []string{"--no-router-kv-events=1"}, nil, "does not take a value", nil},
		{"bool flag with value", []string{"--router-replica-sync=on", "--router-assume-kv-reuse=false"}, nil, "", func(t *testing.T, s FrontendSettings) {
			if !s.Config.RouterReplicaSync || s.Config.RouterAssumeKvReuse {
				t.Errorf("%+v", s.Config)
			}
		}},
		{"validation applies", []string{"--router-host-cache-hit-weight", "2"}, nil, "host_cache_hit_weight", nil},
		{"busy thresholds from flags", []string{"--active-prefill-tokens-threshold-frac", "16", "--active-prefill-tokens-threshold", "600000"}, nil, "",
			func(t *testing.T, s FrontendSettings) {
				if *s.Thresholds.ActivePrefillTokensThresholdFrac != 16 || *s.Thresholds.ActivePrefillTokensThreshold != 600000 {
					t.Errorf("%+v", s.Thresholds)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseFrontendSettings(tt.args, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestKvRouterConfigFromEnv(t *testing.T) {
	c, warnings, err := KvRouterConfigFromEnv(selEnv("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY", "0.8",
		"DYN_ROUTER_HOST_CACHE_HIT_WEIGHT", "0.5", "DYN_SHARED_CACHE_TYPE", "hicache", "DYN_ROUTER_EVENT_THREADS", "x"))
	if err != nil || c.OverlapScoreCreditDecay != 0.8 || c.HostCacheHitWeight != 0.5 || c.SharedCacheMultiplier != 0.5 ||
		c.RouterEventThreads != 4 || len(warnings) != 1 {
		t.Errorf("%+v %v %v", c, warnings, err)
	}
	if _, _, err := KvRouterConfigFromEnv(selEnv("DYN_ROUTER_QUEUE_POLICY", "lifo")); err == nil {
		t.Errorf("unknown queue policy must be an error")
	}
}

func TestConfigHelpers(t *testing.T) {
	c := DefaultKvRouterConfig()
	if !c.ShouldSubscribeToKvEvents() {
		t.Errorf("defaults subscribe")
	}
	c.ApplyLegacyOverlapScoreWeight(0)
	if c.ShouldSubscribeToKvEvents() || c.PrefillLoadScale != 0 {
		t.Errorf("weight 0 turns the indexer off")
	}
	c.RouterQueueThreshold = selF(3)
	if got := c.EffectiveConditionalDisaggPrefillBusyThreshold(); got == nil || *got != 3 {
		t.Errorf("fallback to queue threshold")
	}
	c.ConditionalDisaggPrefillBusyThreshold = selF(1)
	if got := c.EffectiveConditionalDisaggPrefillBusyThreshold(); *got != 1 {
		t.Errorf("explicit threshold wins")
	}
}
