package boundedyaml

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// kubernetesDocuments splits data with the reader the converters use; the
// separator lines it leaves at the start of a document are dropped (they hold
// nothing to expand). ok is false when that reader fails.
func kubernetesDocuments(data []byte) (out []string, ok bool) {
	yr := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, true
		}
		if err != nil {
			return nil, false
		}
		for {
			line, rest, _ := bytes.Cut(doc, []byte("\n"))
			if !isSeparator(line) {
				break
			}
			doc = rest
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			out = append(out, crlf(doc))
		}
	}
}

// crlf trims a document and drops its carriage returns, which the Kubernetes
// reader takes out of line ends (and which expand nothing).
func crlf(doc []byte) string {
	return string(bytes.TrimSpace(bytes.ReplaceAll(doc, []byte("\r"), nil)))
}

func ourDocuments(t *testing.T, data []byte) []string {
	var out []string
	for i, d := range documents(data) {
		if i != len(out) {
			t.Errorf("%q: index %d at document %d", data, i, len(out))
		}
		out = append(out, crlf(d))
	}
	return out
}

// TestDocumentsSplitAsTheKubernetesReader: documents (pkg/simulate may not
// import k8s.io) splits a stream where k8s.io/apimachinery's YAMLReader does:
// "---" lines with trailing blanks separate; "--- x", "----" and an indented
// "---" do not; a comment may follow; empty documents vanish.
func TestDocumentsSplitAsTheKubernetesReader(t *testing.T) {
	for _, in := range []string{
		"a: 1\n",
		"---\na: 1\n---\nb: 2\n",
		"a: 1\n---  \n\n---\nb: 2",
		"a: |\n  ---\nb: 2\n",
		"a: 1\n--- x\n----\n",
		"",
		"---\n---\n",
		"a: 1\r\n---\r\nb: 2\r\n",
		"a: 1\n---\t\nb: &x [1]\nc: *x\n",
		"0\n---#00",
		"a: 1\n--- # next\nb: 2\n",
	} {
		want, ok := kubernetesDocuments([]byte(in))
		if got := ourDocuments(t, []byte(in)); ok && !slices.Equal(got, want) {
			t.Errorf("%q: got %q, the Kubernetes reader %q", in, got, want)
		}
	}
}

// FuzzDocuments compares the split with the Kubernetes reader's.
func FuzzDocuments(f *testing.F) {
	for _, s := range []string{"a: 1\n---\nb: 2\n", "---\n---  \nx\n", "a: |\n  ---\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, ok := kubernetesDocuments([]byte(in))
		if got := ourDocuments(t, []byte(in)); ok && !slices.Equal(got, want) {
			t.Errorf("%q: got %q, the Kubernetes reader %q", in, got, want)
		}
	})
}
