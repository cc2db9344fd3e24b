package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// keyMap holds every key binding, defined once: Update matches against them and
// the help overlay lists them.
type keyMap struct {
	// Global.
	Quit, Help, NextTab, PrevTab, Tab1, Tab2, Tab3, Tab4, Deployment, Refresh key.Binding
	// Movement.
	Up, Down, Left, Right, Enter, Back key.Binding
	// Workers.
	Filter, Sort, SortReverse key.Binding
	// Findings.
	ClearHighlight key.Binding
	// Route explorer.
	Edit, Enforcement, Weight, TempUp, TempDown, DomainDown, Exclude, ClearWhatIf, Matrix, RouterMode key.Binding
}

func newKeyMap() keyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Quit:       b("q/ctrl+c", "quit", "q", "ctrl+c"),
		Help:       b("?", "this help", "?"),
		NextTab:    b("tab", "next tab", "tab"),
		PrevTab:    b("shift+tab", "previous tab", "shift+tab"),
		Tab1:       b("1", "topology", "1"),
		Tab2:       b("2", "workers", "2"),
		Tab3:       b("3", "findings", "3"),
		Tab4:       b("4", "route explorer", "4"),
		Deployment: b("d", "next deployment", "d"),
		Refresh:    b("ctrl+r", "reload now", "ctrl+r"),

		Up:    b("↑/k", "up", "up", "k"),
		Down:  b("↓/j", "down", "down", "j"),
		Left:  b("←/h", "left", "left", "h"),
		Right: b("→/l", "right", "right", "l"),
		Enter: b("enter", "drill in: expand, select", "enter"),
		Back:  b("esc", "back: close, clear", "esc"),

		Filter:      b("/", "filter: text role:R domain:V node:N", "/"),
		Sort:        b("s", "sort by the next column", "s"),
		SortReverse: b("S", "reverse the sort", "S"),

		ClearHighlight: b("c", "clear the ◆ highlight", "c"),

		Edit:        b("i or /", "edit token ids (enter keeps, esc cancels)", "i", "/"),
		Enforcement: b("e", "enforcement: preferred→off→required", "e"),
		Weight:      b("w", weightHelp(), "w"),
		TempUp:      b("+", "temperature +0.25", "+", "="),
		TempDown:    b("-", "temperature −0.25", "-"),
		DomainDown:  b("z", "take the next domain value down", "z"),
		Exclude:     b("x", "exclude/restore the worker at ▶", "x"),
		ClearWhatIf: b("r", "reset every what-if", "r"),
		Matrix:      b("a", "all-prefill matrix on/off", "a"),
		RouterMode:  b("m", routerModeHelp(), "m"),
	}
}

// helpGroup is one section of the help overlay.
type helpGroup struct {
	Title string
	Keys  []key.Binding
}

func (k keyMap) groups() []helpGroup {
	return []helpGroup{
		{"Global", []key.Binding{k.NextTab, k.PrevTab, k.Tab1, k.Tab2, k.Tab3, k.Tab4, k.Deployment, k.Refresh, k.Help, k.Quit}},
		{"Move (tiles, rows, candidates)", []key.Binding{k.Up, k.Down, k.Left, k.Right, k.Enter, k.Back}},
		{"Workers", []key.Binding{k.Filter, k.Sort, k.SortReverse}},
		{"Findings", []key.Binding{k.ClearHighlight}},
		{"Route explorer", []key.Binding{k.Edit, k.Enforcement, k.Weight, k.TempUp, k.TempDown, k.DomainDown, k.Exclude, k.RouterMode, k.ClearWhatIf, k.Matrix}},
	}
}

// weightHelp describes the cycle of the w key from the weights it cycles
// through, so the help cannot drift from the behaviour.
func weightHelp() string {
	parts := make([]string, 0, len(weights))
	for _, w := range weights[1:] {
		parts = append(parts, num(w))
	}
	return "preferred weight: " + strings.Join(parts, "→") + "→policy"
}

// routerModeHelp describes the cycle of the m key from the modes it cycles
// through (the first two, then the way back to the frontend's own mode; the
// docs list them all).
func routerModeHelp() string {
	return "router mode: " + string(routerModes[1]) + "→" + string(routerModes[2]) + "→…→frontend's"
}
