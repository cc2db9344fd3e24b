package dynosim

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// eachString walks a decoded YAML document and calls f on every string, keys
// included.
func eachString(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case map[string]any:
		for k, e := range x {
			f(k)
			eachString(e, f)
		}
	case []any:
		for _, e := range x {
			eachString(e, f)
		}
	}
}

// TestExportModelNames: the model name comes from the cluster. The export
// copied it into engine.model as it was — escape sequences YAML decodes back
// to raw ESC and BEL, local paths DynoSim would load (issue 29). Only a
// Hugging Face id is written; anything else becomes the placeholder with a
// note, escaped, in the header.
func TestExportModelNames(t *testing.T) {
	tests := []struct {
		model, want string
	}{
		{"Qwen/Qwen3-32B", "Qwen/Qwen3-32B"},
		{"meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct"},
		{"gpt2", "gpt2"},
		{"/home/victim/.ssh", Placeholder},
		{"../../etc/passwd", Placeholder},
		{"~/.cache/model", Placeholder},
		{"./model", Placeholder},
		{"org/name/extra", Placeholder},
		{"Qwen/\x1b]0;PWNED\x07Qwen3", Placeholder},
		{"Qwen/Qwen3\u202e", Placeholder},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			s := exampleScenario()
			s.Model = tt.model
			var b bytes.Buffer
			if err := Export(&b, s); err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if got := doc["engine"].(map[string]any)["model"]; got != tt.want {
				t.Errorf("engine.model = %q, want %q", got, tt.want)
			}
			eachString(doc, func(v string) {
				if !termsafe.Safe(v) {
					t.Errorf("the spec decodes to a string with a control character: %q", v)
				}
			})
			for _, line := range strings.Split(b.String(), "\n") {
				if !termsafe.Safe(line) {
					t.Errorf("the file holds a raw control character: %q", line)
				}
			}
			if tt.want == Placeholder && !strings.Contains(b.String(), "is not a Hugging Face model id (org/name)") {
				t.Errorf("no note says why engine.model is %q:\n%s", Placeholder, b.String())
			}
		})
	}
}

// TestExportRefusesControlValues: a component name with a control character
// decodes from the YAML to the raw character, so the export refuses it
// although the YAML text itself is escaped.
func TestExportRefusesControlValues(t *testing.T) {
	s := exampleScenario()
	s.Trace.Path = "trace\x1b[2J.jsonl"
	err := Export(&bytes.Buffer{}, s)
	if err == nil || !strings.Contains(err.Error(), `holds control or invisible characters`) || !termsafe.Safe(err.Error()) {
		t.Fatalf("err = %v", err)
	}
}
