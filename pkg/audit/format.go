package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Printed is v as Rust's {:.N} prints it.
func Printed(v float64, decimals int) Number {
	var s string
	switch {
	case math.IsNaN(v):
		s = "NaN"
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	default:
		s = strconv.FormatFloat(v, 'f', decimals, 64)
	}
	n, _ := parseNumber(s, false)
	return n
}

// Debug is v as Rust's Debug ({:?}) and serde_json print an f64: the shortest
// text that reads back to v, with ".0" on whole numbers and an exponent
// outside [1e-4, 1e16).
func Debug(v float64) Number {
	var s string
	abs := math.Abs(v)
	switch {
	case math.IsNaN(v):
		s = "NaN"
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	case v == 0 || abs >= 1e-4 && abs < 1e16:
		s = strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.ContainsRune(s, '.') {
			s += ".0"
		}
	default:
		s = strconv.FormatFloat(v, 'e', -1, 64) // 1e-05, 1.5e+16
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		s = mant + "e" + strconv.Itoa(e)
	}
	n, _ := parseNumber(s, true)
	return n
}

// Where each line is logged (module target, source file, line), as the
// router's tracing metadata names it.
var lineOrigin = map[LineKind]struct {
	target, file string
	line         int
}{
	KindSelected: {"dynamo_kv_router::scheduling::selector", "lib/kv-router/src/scheduling/selector/mod.rs", 258},
	KindFormula:  {"dynamo_kv_router::scheduling::selector::default", "lib/kv-router/src/scheduling/selector/default.rs", 356},
	KindBest:     {"dynamo_llm::kv_router::push_router::selection", "lib/llm/src/kv_router/push_router/selection.rs", 186},
	KindInput:    {"dynamo_llm::kv_router", "lib/llm/src/kv_router.rs", 141},
}

// outField is one structured field as FormatLine writes it.
type outField struct {
	name string
	// text is the compact text form (after "name="); json the JSON value.
	text, json string
}

// FormatLine writes a record as the router logs it: tracing-subscriber's
// compact format (FormatText, or FormatANSI with its colours) or Dynamo's
// JSONL (FormatJSON). It is the inverse of ParseLine, and how the fixtures
// of the audit are written: a decision computed by pkg/routecore, printed
// exactly as the router would print it. Numbers are written as their Text.
func FormatLine(rec Record, format Format) ([]byte, error) {
	msg, fs, err := messageAndFields(rec)
	if err != nil {
		return nil, err
	}
	origin := lineOrigin[rec.Kind]
	level := rec.Level
	if level == "" {
		level = "DEBUG"
		if rec.Kind == KindSelected {
			level = "INFO"
		}
	}
	var b bytes.Buffer
	switch format {
	case FormatJSON:
		b.WriteString(`{"time":`)
		writeJSONString(&b, rec.Time)
		b.WriteString(`,"level":`)
		writeJSONString(&b, level)
		b.WriteString(`,"file":`)
		writeJSONString(&b, origin.file)
		fmt.Fprintf(&b, `,"line":%d,"target":`, origin.line)
		writeJSONString(&b, origin.target)
		b.WriteString(`,"message":`)
		writeJSONString(&b, msg)
		sorted := slices.Clone(fs)
		slices.SortStableFunc(sorted, func(a, b outField) int { return strings.Compare(a.name, b.name) })
		for _, f := range sorted {
			b.WriteString(",")
			writeJSONString(&b, f.name)
			b.WriteString(":")
			b.WriteString(f.json)
		}
		b.WriteString("}")
	case FormatText, FormatANSI:
		ansi := format == FormatANSI
		paint := func(code, s string) string {
			if !ansi {
				return s
			}
			return "\x1b[" + code + "m" + s + "\x1b[0m"
		}
		padded := fmt.Sprintf("%5s", level)
		b.WriteString(paint("2", rec.Time))
		b.WriteString(" ")
		b.WriteString(paint(levelColour(level), padded))
		b.WriteString(" ")
		b.WriteString(paint("2", origin.target))
		b.WriteString(paint("2", ":"))
		b.WriteString(" ")
		b.WriteString(msg)
		for _, f := range fs {
			b.WriteString(" ")
			b.WriteString(paint("3", f.name))
			b.WriteString(paint("2", "="))
			b.WriteString(f.text)
		}
	default:
		return nil, fmt.Errorf("unknown format %q", format)
	}
	return b.Bytes(), nil
}

func levelColour(level string) string {
	switch level {
	case "TRACE":
		return "35"
	case "DEBUG":
		return "34"
	case "INFO":
		return "32"
	case "WARN":
		return "33"
	}
	return "31"
}

// messageAndFields renders the message and the structured fields of rec in
// the order the router's macros record them.
func messageAndFields(rec Record) (string, []outField, error) {
	var fs []outField
	// recordStr is a &str field: Debug-quoted in text; in JSON the string, or
	// the JSON value it parses as (CustomJsonFormatter's record_str).
	recordStr := func(name, v string) outField {
		j := jsonString(v)
		if v != "" && json.Valid([]byte(v)) {
			j = v
		}
		return outField{name: name, text: rustQuote(v), json: j}
	}
	// display is a %value field: plain in text, a string in JSON.
	display := func(name, v string) outField { return outField{name: name, text: v, json: jsonString(v)} }
	// debug is a ?value field: its Debug text, a string in JSON.
	debug := func(name, v string) outField { return outField{name: name, text: v, json: jsonString(v)} }
	u64 := func(name string, v uint64) outField {
		s := strconv.FormatUint(v, 10)
		return outField{name: name, text: s, json: s}
	}
	f64 := func(name string, n Number) outField {
		j := n.Text
		switch {
		case math.IsNaN(n.Value) || math.IsInf(n.Value, 0):
			j = "0" // serde_json has no such number; Dynamo writes 0
		case !json.Valid([]byte(j)):
			j = Debug(n.Value).Text // a text the router would not print ("00", "+1", "1."): its value
		}
		return outField{name: name, text: n.Text, json: j}
	}
	switch rec.Kind {
	case KindSelected:
		s := rec.Selection
		if s == nil {
			return "", nil, fmt.Errorf("selected record without a selection")
		}
		switch s.Form {
		case "pinned":
			return fmt.Sprintf("Selected pinned worker: worker_type=%s, worker_id=%d dp_rank=%d, logit: %s, effective cached blocks: %s",
				rec.WorkerType, s.Worker.WorkerID, s.Worker.DpRank, s.Logit.Text, numText(s.EffectiveCachedBlocks)), withRequestID(rec, recordStr), nil
		case "text", "text-v1":
			return selectedText(rec), nil, nil
		}
		fs = append(fs, recordStr("router_mode", "kv"))
		if rec.RequestID != "" {
			fs = append(fs, recordStr("request_id", rec.RequestID))
		} else {
			fs = append(fs, recordStr("request_id", "-"))
		}
		fs = append(fs, u64("worker_id", uint64(s.Worker.WorkerID)), display("worker_type", rec.WorkerType),
			debug("dp_rank", strconv.FormatUint(uint64(s.Worker.DpRank), 10)), f64("logit", s.Logit))
		if s.EffectiveCachedBlocks != nil {
			fs = append(fs, f64("effective_cached_blocks", *s.EffectiveCachedBlocks))
		}
		fs = append(fs, u64("host_pinned_blocks", deref(s.HostPinnedBlocks)), u64("disk_blocks", deref(s.DiskBlocks)))
		if s.EffectiveCachedBlocks != nil {
			total := "None"
			if s.TotalKvBlocks != nil {
				total = "Some(" + strconv.FormatUint(*s.TotalKvBlocks, 10) + ")"
			}
			fs = append(fs, debug("total_kv_blocks", total))
		}
		return "Selected worker", fs, nil
	case KindFormula:
		f := rec.Formula
		if f == nil {
			return "", nil, fmt.Errorf("formula record without a formula")
		}
		msg, err := formulaText(f)
		if err != nil {
			return "", nil, err
		}
		if rec.RequestID != "" || rec.WorkerType != "" {
			id := rec.RequestID
			if id == "" {
				id = "-"
			}
			fs = append(fs, recordStr("request_id", id), recordStr("worker_type", rec.WorkerType))
		}
		return msg, fs, nil
	case KindBest:
		b := rec.Best
		if b == nil {
			return "", nil, fmt.Errorf("routing-best record without its fields")
		}
		msg := fmt.Sprintf("[ROUTING] Best: worker_%d dp_rank=%d with %d/%d blocks overlap", b.Worker.WorkerID, b.Worker.DpRank, b.OverlapBlocks, b.TotalBlocks)
		fs = append(fs, display("request_id", rec.RequestID), u64("worker_id", uint64(b.Worker.WorkerID)), u64("dp_rank", uint64(b.Worker.DpRank)),
			u64("overlap_blocks", b.OverlapBlocks), u64("total_blocks", b.TotalBlocks))
		return msg, fs, nil
	case KindInput:
		in := rec.Input
		if in == nil {
			return "", nil, fmt.Errorf("routing-input record without its fields")
		}
		parts := make([]string, len(in.LocalHashes))
		for i, h := range in.LocalHashes {
			parts[i] = strconv.FormatUint(h, 10)
		}
		fs = append(fs, recordStr("request_id", rec.RequestID), u64("isl_tokens", in.ISLTokens), u64("block_size", in.BlockSize),
			u64("num_blocks", in.NumBlocks), debug("local_hashes", "["+strings.Join(parts, ", ")+"]"))
		return "[ROUTING_INPUT] request local hashes", fs, nil
	}
	return "", nil, fmt.Errorf("unknown record kind %q", rec.Kind)
}

func withRequestID(rec Record, recordStr func(string, string) outField) []outField {
	if rec.RequestID == "" {
		return nil
	}
	return []outField{recordStr("request_id", rec.RequestID)}
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func numText(n *Number) string {
	if n == nil {
		return "0.00"
	}
	return n.Text
}

// selectedText is the older selectors' "Selected worker: …" message.
func selectedText(rec Record) string {
	s := rec.Selection
	var b strings.Builder
	b.WriteString("Selected worker: ")
	if s.Form == "text" {
		fmt.Fprintf(&b, "worker_type=%s, ", rec.WorkerType)
	}
	fmt.Fprintf(&b, "worker_id=%d dp_rank=%d, logit: %s", s.Worker.WorkerID, s.Worker.DpRank, s.Logit.Text)
	if s.EffectiveCachedBlocks != nil {
		if s.Form == "text-v1" {
			fmt.Fprintf(&b, ", cached blocks: %s", s.EffectiveCachedBlocks.Text)
		} else {
			fmt.Fprintf(&b, ", effective cached blocks: %s", s.EffectiveCachedBlocks.Text)
		}
	}
	if s.HostPinnedBlocks != nil {
		fmt.Fprintf(&b, ", host_pinned blocks: %d", *s.HostPinnedBlocks)
	}
	if s.DiskBlocks != nil {
		fmt.Fprintf(&b, ", disk blocks: %d", *s.DiskBlocks)
	}
	if s.TreeSize != nil {
		fmt.Fprintf(&b, ", tree size: %d", *s.TreeSize)
	}
	if s.TotalKvBlocks != nil {
		fmt.Fprintf(&b, ", total blocks: %d", *s.TotalKvBlocks)
	}
	return b.String()
}

// formulaText is a Formula line's message in the shape the record names.
func formulaText(f *Formula) (string, error) {
	name := f.Name
	if name == "" {
		name = "Formula"
	}
	head := fmt.Sprintf("%s for worker_id=%d dp_rank=%d with %s ", name, f.Worker.WorkerID, f.Worker.DpRank, f.EffectiveBlocks.Text)
	shared := func(effective string) string {
		if f.SharedBeyond == nil || f.SharedMultiplier == nil {
			return ""
		}
		return fmt.Sprintf("effective %s blocks, %d shared blocks beyond device (multiplier=%s): ", effective, *f.SharedBeyond, f.SharedMultiplier.Text)
	}
	switch f.Shape {
	case ShapePrefill:
		lead := "effective cached blocks: "
		if s := shared("cached"); s != "" {
			lead = s
		}
		return head + lead + f.Logit.Text + " = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = " +
			f.Scale.Text + " * " + f.Adjusted.Text + " + " + f.Decode.Text + " + " + f.RequestCost.Text +
			" (raw_prefill_blocks: " + f.Raw.Text + ", overlap_credit_blocks: " + f.Credit.Text + ", overlap_credit_decay: " + f.Decay.Text + ")", nil
	case ShapeDecodeOverlap:
		return head + "effective cached blocks: " + f.Logit.Text + " = max(0, decode_blocks - overlap_credit_blocks) + active_request_cost_blocks = max(0, " +
			f.Decode.Text + " - " + f.Credit.Text + ") + " + f.RequestCost.Text, nil
	case ShapeWeighted:
		if s := shared("device"); s != "" {
			return head + s + f.Logit.Text + " = " + f.Weight.Text + " * adjusted_prefill_blocks + decode_blocks = " +
				f.Weight.Text + " * " + f.PrefillBlocks.Text + " + " + f.Decode.Text +
				fmt.Sprintf(" (prefill_tokens: %d -> %d)", deref(f.PrefillTokens), deref(f.AdjustedTokens)), nil
		}
		lead := "effective cached blocks: "
		if f.EffectiveBlocks.Decimals == 0 {
			lead = "cached blocks: " // the first generation prints the integer overlap
		}
		return head + lead + f.Logit.Text + " = " + f.Weight.Text + " * prefill_blocks + decode_blocks = " +
			f.Weight.Text + " * " + f.PrefillBlocks.Text + " + " + f.Decode.Text, nil
	}
	return "", fmt.Errorf("unknown formula shape %q", f.Shape)
}

// rustQuote is Rust's Debug form of a string.
func rustQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == 0:
			b.WriteString(`\0`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func jsonString(s string) string {
	var b bytes.Buffer
	writeJSONString(&b, s)
	return b.String()
}

// writeJSONString writes s as serde_json does (no HTML escaping).
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}
