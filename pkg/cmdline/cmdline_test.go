package cmdline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShellWords(t *testing.T) {
	env := map[string]string{"MODEL": "Qwen/Qwen3-8B", "EMPTY": "", "SP": "a b"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cases := []struct {
		in   string
		want []string
	}{
		{`python3 -m dynamo.frontend --router-mode kv`, []string{"python3", "-m", "dynamo.frontend", "--router-mode", "kv"}},
		{"a 'b c' \"d $MODEL\" e\\ f", []string{"a", "b c", "d Qwen/Qwen3-8B", "e f"}},
		{`x=${MODEL} ${UNSET:-dflt} ${EMPTY:-dflt} $UNSET $`, []string{"x=Qwen/Qwen3-8B", "dflt", "dflt", "$UNSET", "$"}},
		{"set -e; exec run --a=1 && echo ok||true # --router-mode x", []string{"set", "-e", ";", "exec", "run", "--a=1", "&&", "echo", "ok", "||", "true"}},
		{"a \\\n  b \"q\\\"x\" $(hostname) 'unterminated", []string{"a", "b", `q"x`, "$(hostname)", "unterminated"}},
		{`"$SP" $SP ''`, []string{"a b", "a b", ""}},
		{"", nil},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, Words(tc.in, lookup)); diff != "" {
			t.Errorf("Words(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	argvCases := []struct {
		command, args []string
		want          []string
	}{
		{[]string{"/bin/sh", "-c"}, []string{"exec python3 -m dynamo.sglang --disaggregation-mode prefill"},
			[]string{"/bin/sh", "-c", "exec", "python3", "-m", "dynamo.sglang", "--disaggregation-mode", "prefill"}},
		{[]string{"bash"}, []string{"-ec", "run --x $(MODEL)"}, []string{"bash", "-ec", "run", "--x", "Qwen/Qwen3-8B"}},
		{nil, []string{"python3 -m dynamo.frontend --router-mode kv"}, []string{"python3", "-m", "dynamo.frontend", "--router-mode", "kv"}},
		{[]string{"python3"}, []string{"--served-model-name", "My Model", "--x=$(MODEL)", "$$(MODEL)"},
			[]string{"python3", "--served-model-name", "My Model", "--x=Qwen/Qwen3-8B", "$(MODEL)"}},
	}
	for _, tc := range argvCases {
		if diff := cmp.Diff(tc.want, Argv(tc.command, tc.args, lookup)); diff != "" {
			t.Errorf("Argv(%q, %q) (-want +got):\n%s", tc.command, tc.args, diff)
		}
	}
}
