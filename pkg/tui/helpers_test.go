package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// examples are the capture files under examples/.
var examples = []string{
	"etcd-discovery-v1alpha1.yaml",
	"healthy-three-zone-required.yaml",
	"preferred-rollout-drift.yaml",
	"prefill-only-zone-required.yaml",
}

func exampleData(t testing.TB, name string) *Data {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), "examples/"+name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewData(b, DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func exampleTokens(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("../../examples/prompts/support-chat.tokens")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// newTestModel builds a monochrome model on an example, sized, with the clock
// pinned 5 s after the capture, and runs its Init commands.
func newTestModel(t testing.TB, name string, w, h int, tokens string) *Model {
	t.Helper()
	d := exampleData(t, name)
	m := New(Options{Initial: d, Mode: "capture", Now: nowAfter(d), Tokens: tokens})
	send(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	run(t, m, m.Init())
	return m
}

// send delivers a message and runs the commands it returns.
func send(t testing.TB, m *Model, msg tea.Msg) {
	t.Helper()
	_, cmd := m.Update(msg)
	run(t, m, cmd)
}

// run executes a command synchronously, feeding its messages back into the
// model; ticks (the refresh schedule) and quit are not followed.
func run(t testing.TB, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, tickMsg, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			run(t, m, c)
		}
	default:
		send(t, m, msg)
	}
}

// nowAfter pins the clock 5 s after the capture.
func nowAfter(d *Data) func() time.Time {
	return func() time.Time { return d.Snapshot.CollectedAt.Add(5 * time.Second) }
}

type contextLike = context.Context

func keys(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func typeKeys(t testing.TB, m *Model, s string) {
	t.Helper()
	for _, r := range s {
		send(t, m, keys(string(r)))
	}
}
