package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Markers of a generated block.
var (
	beginRE = regexp.MustCompile(`^<!-- generated: (.+?) -->$`)
	endLine = "<!-- end generated -->"
	fenceRE = regexp.MustCompile("^(```+|~~~+)([A-Za-z0-9_-]*)$")
)

// Result is what one command run produced.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Runner runs `kubectl dynamo ARGS…`; the error is for runs that must not be
// documented (a usage error).
type Runner func(args []string) (Result, error)

// changedBlock names a block whose content changed.
type changedBlock struct {
	line    int
	command string
}

// fillBlocks regenerates every block of a markdown file and returns the new
// content and the blocks that changed.
func fillBlocks(file, content string, run Runner) (string, []changedBlock, error) {
	lines := strings.SplitAfter(content, "\n")
	var out strings.Builder
	var changed []changedBlock
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		m := beginRE.FindStringSubmatch(strings.TrimRight(lines[i], "\r\n"))
		if m == nil {
			continue
		}
		at := fmt.Sprintf("%s:%d", file, i+1)
		markerLine := i + 1
		// Consecutive markers make one block, their commands shown in order.
		markers := []string{m[1]}
		for i+1 < len(lines) {
			more := beginRE.FindStringSubmatch(strings.TrimRight(lines[i+1], "\r\n"))
			if more == nil {
				break
			}
			markers = append(markers, more[1])
			i++
			out.WriteString(lines[i])
		}
		if i+1 >= len(lines) {
			return "", nil, fmt.Errorf("%s: generated block without a fenced code block after the marker", at)
		}
		open := strings.TrimRight(lines[i+1], "\r\n")
		fm := fenceRE.FindStringSubmatch(open)
		if fm == nil {
			return "", nil, fmt.Errorf("%s: the line after the marker must open a fenced code block (```lang), not %q", at, open)
		}
		closeAt := -1
		for j := i + 2; j < len(lines); j++ {
			if strings.TrimRight(lines[j], "\r\n") == fm[1] {
				closeAt = j
				break
			}
		}
		if closeAt < 0 {
			return "", nil, fmt.Errorf("%s: the code block is not closed with %s", at, fm[1])
		}
		if closeAt+1 >= len(lines) || strings.TrimRight(lines[closeAt+1], "\r\n") != endLine {
			return "", nil, fmt.Errorf("%s: the code block must be followed by %s", at, endLine)
		}
		console := fm[2] == "console"
		if len(markers) > 1 && !console {
			return "", nil, fmt.Errorf("%s: several commands need a console block", at)
		}
		var body string
		for _, marker := range markers {
			c, err := parseCommand(marker)
			if err != nil {
				return "", nil, fmt.Errorf("%s: %s: %w", at, marker, err)
			}
			b, err := render(c, console, run)
			if err != nil {
				return "", nil, fmt.Errorf("%s: %s: %w", at, marker, err)
			}
			body += b
		}
		if strings.Contains(body, "\n"+fm[1]) || strings.HasPrefix(body, fm[1]) {
			return "", nil, fmt.Errorf("%s: the output contains the fence %s: use a longer fence", at, fm[1])
		}
		old := strings.Join(lines[i+2:closeAt], "")
		if old != body {
			changed = append(changed, changedBlock{line: markerLine, command: strings.Join(markers, "; ")})
		}
		out.WriteString(lines[i+1])
		out.WriteString(body)
		out.WriteString(lines[closeAt])
		out.WriteString(lines[closeAt+1])
		i = closeAt + 1
	}
	return out.String(), changed, nil
}

// command is a parsed marker.
type command struct {
	// shown is the command line without "; echo $?".
	shown string
	args  []string
	// head keeps the first N lines of stdout, tail the last N (0: all).
	head int
	tail int
	// grep and after keep the first line containing grep and the after lines
	// that follow it (`| grep -A N PATTERN`).
	grep       string
	after      int
	noStdout   bool
	noStderr   bool
	echoStatus bool
}

// parseCommand reads "kubectl dynamo ARGS [> /dev/null] [2> /dev/null] [| head -N] [; echo $?]".
func parseCommand(s string) (command, error) {
	c := command{shown: s}
	if i := strings.LastIndex(s, ";"); i >= 0 {
		if strings.TrimSpace(s[i+1:]) != "echo $?" {
			return c, fmt.Errorf("only `; echo $?` may follow the command")
		}
		c.echoStatus = true
		c.shown = strings.TrimSpace(s[:i])
	}
	words, err := splitWords(c.shown)
	if err != nil {
		return c, err
	}
	if len(words) < 2 || words[0] != "kubectl" || words[1] != "dynamo" {
		return c, errors.New("the command must start with `kubectl dynamo`")
	}
	words = words[2:]
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch w {
		case ">", "2>", "1>":
			if i+1 >= len(words) || words[i+1] != "/dev/null" {
				return c, fmt.Errorf("only `%s /dev/null` is supported", w)
			}
			c.noStderr = c.noStderr || w == "2>"
			c.noStdout = c.noStdout || w != "2>"
			i++
		case ">/dev/null", "1>/dev/null":
			c.noStdout = true
		case "2>/dev/null":
			c.noStderr = true
		case "|":
			if i+1 < len(words) && words[i+1] == "grep" {
				if i+4 != len(words)-1 || words[i+2] != "-A" {
					return c, errors.New("only `| grep -A N PATTERN` may end the command")
				}
				n, err := strconv.Atoi(words[i+3])
				if err != nil || n < 0 {
					return c, fmt.Errorf("bad grep -A count %q", words[i+3])
				}
				c.grep, c.after = words[i+4], n
				i += 4
				continue
			}
			if i+2 >= len(words) || (words[i+1] != "head" && words[i+1] != "tail") || !strings.HasPrefix(words[i+2], "-") {
				return c, errors.New("only `| head -N` or `| tail -N` may be piped to")
			}
			n, err := strconv.Atoi(words[i+2][1:])
			if err != nil || n < 1 {
				return c, fmt.Errorf("bad %s count %q", words[i+1], words[i+2])
			}
			if i+3 != len(words) {
				return c, fmt.Errorf("`| %s -N` must end the command", words[i+1])
			}
			if words[i+1] == "head" {
				c.head = n
			} else {
				c.tail = n
			}
			i += 2
		default:
			if c.head > 0 || c.tail > 0 || c.grep != "" || c.noStdout || c.noStderr {
				return c, fmt.Errorf("argument %q after a redirection", w)
			}
			c.args = append(c.args, w)
		}
	}
	if (c.head > 0 || c.tail > 0 || c.grep != "") && c.echoStatus {
		return c, errors.New("`| head -N; echo $?` would show head's exit code, not the command's")
	}
	return c, nil
}

// splitWords splits a command line into words: spaces separate, single and
// double quotes group (no escapes inside single quotes; \" and \\ inside double).
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch ch {
		case ' ', '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// render runs the command and formats the block's content.
func render(c command, console bool, run Runner) (string, error) {
	if !console && c.echoStatus {
		return "", errors.New("`; echo $?` needs a console block")
	}
	r, err := run(c.args)
	if err != nil {
		return "", err
	}
	if r.ExitCode == 1 && !console {
		return "", fmt.Errorf("exit code 1 (%s): only a console block may show an error", strings.TrimSpace(r.Stderr))
	}
	stdout := r.Stdout
	if c.noStdout {
		stdout = ""
	}
	if c.head > 0 {
		lines := strings.SplitAfter(stdout, "\n")
		if len(lines) > c.head {
			stdout = strings.Join(lines[:c.head], "")
		}
	}
	if c.grep != "" {
		lines := strings.SplitAfter(stdout, "\n")
		stdout = ""
		for k, l := range lines {
			if strings.Contains(l, c.grep) {
				stdout = strings.Join(lines[k:min(len(lines), k+c.after+1)], "")
				break
			}
		}
	}
	if c.tail > 0 {
		lines := strings.SplitAfter(strings.TrimSuffix(stdout, "\n"), "\n")
		if len(lines) > c.tail {
			stdout = strings.Join(lines[len(lines)-c.tail:], "") + "\n"
		}
	}
	if !console {
		return withNewline(stdout), nil
	}
	var b strings.Builder
	shown := c.shown
	if c.echoStatus {
		shown += "; echo $?"
	}
	b.WriteString("$ " + shown + "\n")
	b.WriteString(withNewline(stdout))
	if !c.noStderr {
		b.WriteString(withNewline(r.Stderr))
	}
	if c.echoStatus {
		fmt.Fprintf(&b, "%d\n", r.ExitCode)
	}
	return b.String(), nil
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
