package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/fileio"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// AddSpecialTokensHelp is the help of --add-special-tokens, one rule for
// every command that tokenizes a prompt (hash, explain-route): on by default,
// because Dynamo's frontend tokenizes a completions prompt with the
// tokenizer's special tokens (its post-processor's BOS, …); off for text that
// already holds them, such as a rendered chat template. docs/tokenizer.md
// says the same.
const AddSpecialTokensHelp = "Add the tokenizer's special tokens (e.g. BOS), as Dynamo's frontend does for a prompt; =false for text that already holds them (a rendered chat template)"

// MaxInputFileBytes bounds every file or stdin read by the commands, so a wrong
// path (a disk image, /dev/zero) fails clearly instead of exhausting memory.
const MaxInputFileBytes = 256 << 20

// ReadInput reads a named file, or standard input for "-", up to
// MaxInputFileBytes. what names the flag in errors.
func ReadInput(in io.Reader, path, what string) ([]byte, error) {
	return ReadInputLimit(in, path, what, MaxInputFileBytes)
}

// ReadInputLimit is ReadInput with another size limit (capture files may be
// larger than token or prompt files). It is fileio.ReadFile: a path must be a
// regular file (a device, a named pipe or a directory is refused from its
// stat, before it is opened), standard input and process substitution are
// read once within the limit.
func ReadInputLimit(in io.Reader, path, what string, limit int64) ([]byte, error) {
	return fileio.ReadFile(in, path, what, limit)
}

func displayPath(p string) string {
	if p == "-" {
		return "standard input"
	}
	return p
}

// ParseTokenList parses token ids given as text: a JSON array of integers, or
// integers separated by commas and/or whitespace, where lines starting with #
// are comments. Every id must be a decimal
// integer in [0, 2^32). source names the input in errors, and a bad id is
// named by its position counting from 1 ("--tokens, token 3: …").
func ParseTokenList(data []byte, source string) ([]uint32, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s holds no token ids", source)
	}
	if trimmed[0] == '[' {
		return parseJSONTokens(trimmed, source)
	}
	// Lines starting with # are comments (token files can say what they hold).
	var text strings.Builder
	for line := range strings.Lines(string(trimmed)) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			text.WriteString("\n")
			continue
		}
		text.WriteString(line)
	}
	fields := strings.FieldsFunc(text.String(), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s holds no token ids", source)
	}
	out := make([]uint32, len(fields))
	for i, fld := range fields {
		v, err := routecore.ParseTokenID(fld)
		if err != nil {
			return nil, fmt.Errorf("%s, token %d: %w", source, i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

func parseJSONTokens(data []byte, source string) ([]uint32, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, fmt.Errorf("%s: expected a JSON array of integer token ids, found a %s", source, ute.Value)
		}
		return nil, fmt.Errorf("%s: invalid JSON token array: %w", source, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: unexpected data after the JSON token array", source)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s holds no token ids", source)
	}
	out := make([]uint32, len(raw))
	for i, r := range raw {
		// Parse the literal text ourselves: json.Number would accept "1" in
		// quotes, and float64 would round large values.
		lit := bytes.TrimSpace(r)
		if len(lit) > 0 && lit[0] == '"' {
			return nil, fmt.Errorf("%s, token %d: %s is a JSON string; write token ids as bare integers", source, i+1, lit)
		}
		v, err := routecore.ParseTokenID(string(lit))
		if err != nil {
			return nil, fmt.Errorf("%s, token %d: %w", source, i+1, err)
		}
		out[i] = v
	}
	return out, nil
}
