package build

import (
	"fmt"
	"strconv"
	"strings"
)

// bldSample is one Prometheus sample.
type bldSample struct {
	name   string
	labels map[string]string
	value  float64
	// raw is the value as written, for counts read exactly (bldSampleCount).
	raw string
}

// bldPromResult is the outcome of parsing an exposition text.
type bldPromResult struct {
	samples    []bldSample
	errors     int
	firstError string
}

// bldMaxLabels bounds the labels of one sample.
const bldMaxLabels = 256

// bldParsePromText parses the Prometheus text exposition format (and the
// OpenMetrics subset frontends emit): # comments, HELP and TYPE lines,
// name{label="value",…} value [timestamp] samples with \\ \" \n label escapes and
// NaN/±Inf values. Only samples whose name keep accepts are returned; malformed
// lines are counted and skipped. It never panics and works in one pass.
func bldParsePromText(text string, keep func(string) bool) bldPromResult {
	var res bldPromResult
	lineNo := 0
	for len(text) > 0 {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		lineNo++
		line = strings.TrimRight(line, "\r")
		t := strings.TrimLeft(line, " \t")
		if t == "" || t[0] == '#' {
			continue
		}
		s, err := bldParsePromLine(t, keep)
		if err != nil {
			res.errors++
			if res.firstError == "" {
				res.firstError = fmt.Sprintf("line %d: %v", lineNo, err)
			}
			continue
		}
		if s != nil {
			res.samples = append(res.samples, *s)
		}
	}
	return res
}

func bldIsNameChar(c byte, first bool) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// bldParsePromLine parses one sample line; it returns nil, nil for a valid
// sample that keep rejects.
func bldParsePromLine(t string, keep func(string) bool) (*bldSample, error) {
	i := 0
	for i < len(t) && bldIsNameChar(t[i], i == 0) {
		i++
	}
	if i == 0 {
		return nil, fmt.Errorf("no metric name")
	}
	s := &bldSample{name: t[:i]}
	wanted := keep == nil || keep(s.name)
	rest := t[i:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		if wanted {
			s.labels = map[string]string{}
		}
		n := 0
		for {
			rest = strings.TrimLeft(rest, " \t")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			if n++; n > bldMaxLabels {
				return nil, fmt.Errorf("more than %d labels", bldMaxLabels)
			}
			j := 0
			for j < len(rest) && bldIsNameChar(rest[j], j == 0) && rest[j] != ':' {
				j++
			}
			if j == 0 {
				return nil, fmt.Errorf("bad label name")
			}
			lname := rest[:j]
			rest = strings.TrimLeft(rest[j:], " \t")
			if !strings.HasPrefix(rest, "=") {
				return nil, fmt.Errorf("label %s: expected '='", lname)
			}
			rest = strings.TrimLeft(rest[1:], " \t")
			if !strings.HasPrefix(rest, `"`) {
				return nil, fmt.Errorf("label %s: expected a quoted value", lname)
			}
			var val strings.Builder
			k := 1
			closed := false
			for k < len(rest) {
				c := rest[k]
				if c == '"' {
					closed = true
					k++
					break
				}
				if c == '\\' {
					if k+1 >= len(rest) {
						break
					}
					switch rest[k+1] {
					case 'n':
						val.WriteByte('\n')
					case '\\', '"':
						val.WriteByte(rest[k+1])
					default:
						return nil, fmt.Errorf("label %s: bad escape \\%c", lname, rest[k+1])
					}
					k += 2
					continue
				}
				val.WriteByte(c)
				k++
			}
			if !closed {
				return nil, fmt.Errorf("label %s: unterminated value", lname)
			}
			if wanted {
				s.labels[lname] = val.String()
			}
			rest = strings.TrimLeft(rest[k:], " \t")
			if strings.HasPrefix(rest, ",") {
				rest = rest[1:]
			} else if !strings.HasPrefix(rest, "}") {
				return nil, fmt.Errorf("expected ',' or '}' after label %s", lname)
			}
		}
	}
	if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return nil, fmt.Errorf("expected a value after %s", s.name)
	}
	fields := strings.Fields(rest)
	// value [timestamp] [# exemplar]
	if len(fields) == 0 {
		return nil, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return nil, fmt.Errorf("value %q is not a number", fields[0])
	}
	if len(fields) > 1 && fields[1] != "#" {
		if _, err := strconv.ParseFloat(fields[1], 64); err != nil {
			return nil, fmt.Errorf("timestamp %q is not a number", fields[1])
		}
		if len(fields) > 2 && fields[2] != "#" {
			return nil, fmt.Errorf("unexpected %q after the timestamp", fields[2])
		}
	}
	if !wanted {
		return nil, nil
	}
	s.value, s.raw = v, fields[0]
	return s, nil
}
