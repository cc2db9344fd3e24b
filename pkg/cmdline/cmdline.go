package cmdline

import (
	"path"
	"slices"
	"strings"
)

// Words splits a shell script into words the way sh does for simple
// commands: blanks separate words; '…' is literal; "…" allows \" \\ \$ \`
// escapes and $VAR expansion; a backslash outside quotes escapes the next
// character (backslash-newline continues the line); unquoted ; & | ( ) < >
// end a word and form words of their own; # at the start of a word starts a
// comment. $VAR and ${VAR} are expanded from env when defined and kept
// verbatim otherwise ($(…) command substitutions are kept verbatim).
func Words(s string, env func(string) (string, bool)) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	expand := func(i int) (string, int) {
		// s[i] == '$'; returns the expansion and the index after it.
		if i+1 >= len(s) {
			return "$", i + 1
		}
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "$", i + 1
			}
			inner := s[i+2 : i+2+end]
			name, def, hasDef := strings.Cut(inner, ":-")
			if env != nil {
				if v, ok := env(name); ok && (v != "" || !hasDef) {
					return v, i + 3 + end
				}
			}
			if hasDef {
				return def, i + 3 + end
			}
			return s[i : i+3+end], i + 3 + end
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			return "$", i + 1
		}
		if env != nil {
			if v, ok := env(s[i+1 : j]); ok {
				return v, j
			}
		}
		return s[i:j], j
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
			i++
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					cur.WriteByte(s[i+1])
					inWord = true
				}
				i += 2
			} else {
				i++
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+end])
				i += end + 2
			}
		case c == '"':
			inWord = true
			i++
			for i < len(s) && s[i] != '"' {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
					if s[i+1] != '\n' {
						cur.WriteByte(s[i+1])
					}
					i += 2
				case s[i] == '$':
					v, next := expand(i)
					cur.WriteString(v)
					i = next
				default:
					cur.WriteByte(s[i])
					i++
				}
			}
			i++ // closing quote
		case strings.IndexByte(";&|()<>", c) >= 0:
			flush()
			j := i + 1
			for j < len(s) && j < i+2 && strings.IndexByte(";&|<>", s[j]) >= 0 && s[j] == c {
				j++
			}
			words = append(words, s[i:j])
			i = j
		case c == '$':
			inWord = true
			if i+1 < len(s) && s[i+1] == '(' {
				// Command substitution: kept verbatim up to the matching ')'.
				depth, j := 0, i+1
				for ; j < len(s); j++ {
					if s[j] == '(' {
						depth++
					} else if s[j] == ')' {
						if depth--; depth == 0 {
							break
						}
					}
				}
				end := min(j+1, len(s))
				cur.WriteString(s[i:end])
				i = end
				continue
			}
			v, next := expand(i)
			cur.WriteString(v)
			i = next
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	flush()
	return words
}

// CommandWords returns argv with every word that is itself a command line (the
// script of a nested `bash -c`, as mpirun runs TRT-LLM's multinode leader) split
// into its words in place, $VAR expanded from env, up to the nesting depth role
// detection opens. The result is a fresh slice.
func CommandWords(argv []string, env map[string]string) []string {
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	return openNested(argv, lookup, 0)
}

func openNested(argv []string, env func(string) (string, bool), depth int) []string {
	out := make([]string, 0, len(argv))
	for _, a := range argv {
		if depth < MaxNesting && strings.ContainsAny(a, " \t\n") && strings.Contains(a, "--") && !looksLikeJSON(a) {
			out = append(out, openNested(Words(a, env), env, depth+1)...)
			continue
		}
		out = append(out, a)
	}
	return out
}

// looksLikeJSON reports whether a word is a JSON value (a flag's argument
// such as --kv-events-config '{"publisher": "zmq"}'), which is kept whole.
func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

// MaxNesting bounds how deep nested shell command strings are opened.
const MaxNesting = 4

// Shells are the shells whose -c script is split into words.
var Shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true, "busybox": true}

// Argv returns a container's command line as words: command and args with
// the kubelet's $(VAR) expansion, and a shell's -c script (or a lone argument
// holding a whole command line) split shell-like, with $VAR expanded from env.
func Argv(command, args []string, env func(string) (string, bool)) []string {
	argv := make([]string, 0, len(command)+len(args))
	for _, a := range slices.Concat(command, args) {
		argv = append(argv, ExpandKube(a, env))
	}
	for i, a := range argv {
		if !Shells[path.Base(a)] {
			continue
		}
		for j := i + 1; j < len(argv)-1; j++ {
			f := argv[j]
			if !strings.HasPrefix(f, "-") || strings.HasPrefix(f, "--") {
				break
			}
			if strings.Contains(f, "c") {
				return append(slices.Clone(argv[:j+1]), Words(argv[j+1], env)...)
			}
		}
	}
	if len(argv) == 1 && strings.ContainsAny(argv[0], " \t\n") {
		return Words(argv[0], env)
	}
	return argv
}

// ExpandKube expands $(VAR) references as the kubelet does ($$ escapes a
// dollar); unknown references are kept verbatim.
func ExpandKube(s string, env func(string) (string, bool)) string {
	if !strings.Contains(s, "$") || env == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end >= 0 {
				name := s[i+2 : i+2+end]
				if v, ok := env(name); ok {
					b.WriteString(v)
					i += 2 + end
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// BoolFlag reads a boolean flag from words: on (or on=VALUE) sets it, off
// clears it; the last occurrence wins and set is false when neither appears.
func BoolFlag(words []string, on, off string) (value, set bool) {
	for _, w := range words {
		name, v, hasVal := strings.Cut(w, "=")
		switch name {
		case on:
			value, set = !hasVal || Truthy(v), true
		case off:
			value, set = false, true
		}
	}
	return value, set
}

// Truthy reads a boolean flag or env value as Dynamo's argument parsers do.
func Truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on", "y", "t":
		return true
	}
	return false
}
