package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	"k8s.io/client-go/util/jsonpath"

	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
)

// Output formats understood by data commands.
const (
	OutputTable = "table"
	OutputWide  = "wide"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
	// OutputJSONPath and OutputGoTemplate take their template after "=":
	// -o jsonpath='{.verdict.routable}', -o go-template='{{.kind}}'. Every
	// command that offers json offers them too.
	OutputJSONPath   = "jsonpath"
	OutputGoTemplate = "go-template"
)

// OutputFlags holds -o/--output and --no-headers for a data command.
type OutputFlags struct {
	Format    string
	NoHeaders bool
	// NoTemplates leaves out jsonpath= and go-template= (set before
	// AddOutputFlags, for commands whose output is not a data document).
	NoTemplates bool
	allowed     []string
}

// AddOutputFlags registers -o/--output (with shell completion of the allowed
// formats) and --no-headers on cmd.
func AddOutputFlags(cmd *cobra.Command, o *OutputFlags, allowed ...string) {
	if len(allowed) == 0 {
		allowed = []string{OutputTable, OutputWide, OutputJSON, OutputYAML}
	}
	o.allowed = allowed
	if o.Format == "" {
		o.Format = allowed[0]
	}
	help := strings.Join(allowed, "|")
	if o.templates() {
		help += "|jsonpath=TEMPLATE|go-template=TEMPLATE"
	}
	cmd.Flags().StringVarP(&o.Format, "output", "o", o.Format, "Output format: "+help)
	if slices.Contains(allowed, OutputTable) {
		cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Print the data rows only: no column headers and no report lines (table and wide output)")
	}
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		out := slices.Clone(allowed)
		if o.templates() {
			out = append(out, OutputJSONPath+"=", OutputGoTemplate+"=")
		}
		// jsonpath= and go-template= wait for their template: no space after them.
		templatesOnly := toComplete != ""
		for _, c := range out {
			if strings.HasPrefix(c, toComplete) && !strings.HasSuffix(c, "=") {
				templatesOnly = false
			}
		}
		if templatesOnly {
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// Validate checks the chosen format.
func (o *OutputFlags) Validate() error {
	if kind, tmpl, ok := o.template(); ok {
		if !o.templates() {
			return FlagErrorf("-o %s is not available here: use one of %s", kind, strings.Join(o.allowed, ", "))
		}
		if tmpl == "" {
			return FlagErrorf("-o %s needs a template, e.g. -o %s", kind, map[string]string{OutputJSONPath: "jsonpath='{.kind}'", OutputGoTemplate: "go-template='{{.kind}}'"}[kind])
		}
		if _, err := o.parse(kind, tmpl); err != nil {
			return FlagErrorf("-o %s: %v", kind, err)
		}
		return nil
	}
	if !slices.Contains(o.allowed, o.Format) {
		extra := ""
		if o.templates() {
			extra = ", jsonpath=TEMPLATE, go-template=TEMPLATE"
		}
		return FlagErrorf("unknown output format %q: use one of %s%s", o.Format, strings.Join(o.allowed, ", "), extra)
	}
	return nil
}

// IsTable reports whether the output is a human table (table or wide).
func (o *OutputFlags) IsTable() bool { return o.Format == OutputTable || o.Format == OutputWide }

// String describes the flag value (for messages).
func (o *OutputFlags) String() string { return fmt.Sprintf("-o %s", o.Format) }

// templates reports whether -o jsonpath=/go-template= are offered.
func (o *OutputFlags) templates() bool {
	return !o.NoTemplates && slices.Contains(o.allowed, OutputJSON)
}

// template splits -o jsonpath=T / go-template=T.
func (o *OutputFlags) template() (kind, tmpl string, ok bool) {
	for _, k := range []string{OutputJSONPath, OutputGoTemplate} {
		if t, found := strings.CutPrefix(o.Format, k+"="); found {
			return k, t, true
		}
		if o.Format == k {
			return k, "", true
		}
	}
	return "", "", false
}

// execer runs a parsed template on decoded JSON data.
type execer func(w io.Writer, data any) error

func (o *OutputFlags) parse(kind, tmpl string) (execer, error) {
	if kind == OutputJSONPath {
		jp := jsonpath.New("output")
		if !strings.Contains(tmpl, "{") {
			tmpl = "{" + tmpl + "}" // kubectl's relaxed form: -o jsonpath=.kind
		}
		if err := jp.Parse(tmpl); err != nil {
			return nil, err
		}
		return jp.Execute, nil
	}
	t, err := template.New("output").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return nil, err
	}
	return t.Execute, nil
}

// PrintStructured prints v for -o json, yaml, jsonpath=… and go-template=…
// and reports whether the format was one of them (false means a human format:
// the caller prints its table). Templates see the JSON document with numbers
// kept exact (u64 values print digit for digit).
func (o *OutputFlags) PrintStructured(w io.Writer, v any) (bool, error) {
	switch o.Format {
	case OutputJSON:
		return true, printers.JSON(w, v)
	case OutputYAML:
		return true, printers.YAML(w, v)
	}
	kind, tmpl, ok := o.template()
	if !ok {
		return false, nil
	}
	run, err := o.parse(kind, tmpl)
	if err != nil {
		return true, FlagErrorf("-o %s: %v", kind, err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return true, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		return true, err
	}
	var buf bytes.Buffer
	if err := run(&buf, data); err != nil {
		return true, fmt.Errorf("-o %s: %w (the fields are those of -o json)", kind, err)
	}
	if buf.Len() > 0 && buf.Bytes()[buf.Len()-1] != '\n' && kind == OutputJSONPath {
		buf.WriteByte('\n')
	}
	_, err = w.Write(buf.Bytes())
	return true, err
}
