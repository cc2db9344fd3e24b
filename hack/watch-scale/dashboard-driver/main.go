// Command dashboard-driver runs `kubectl dynamo dashboard` headless, for
// hack/watch-scale: the same command, options, watches and Bubble Tea model as
// the real dashboard (dashboard.NewCmdDashboard → Options.TUIOptions → tui.New),
// driven by a loop that runs the model's commands concurrently and delivers
// their messages one at a time, as the Bubble Tea runtime does, and renders the
// view after every message. Only the terminal is missing: nothing is written to
// a screen (the rendered frame is discarded).
//
//	dashboard-driver [dashboard flags...]   e.g. llama3-70b -n inference --no-frontend --no-etcd --kubeconfig K
//
// It prints one line per event to stdout, for the harness:
//
//	ready WORKERS READY            the first load is shown (workers, ready workers)
//	reload N WORKERS READY STATE   the Nth reload after a watch change
//	watch STATE DETAIL       a watch state change
//
// and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashboard-driver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	streams := iostreams.System()
	streams.SetStdoutTTY(true) // the dashboard refuses a non-terminal stdout
	streams.SetColorMode(iostreams.ColorNever)
	f := cmdutil.NewFactory(streams)
	var o *dashboard.Options
	cmd := dashboard.NewCmdDashboard(f, func(got *dashboard.Options) error { o = got; return nil })
	f.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return err
	}
	to, err := o.TUIOptions(ctx)
	if err != nil {
		return err
	}
	m := tui.New(to)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	_ = m.View()
	w, r := workers(m)
	fmt.Printf("ready %d %d\n", w, r)

	msgs := make(chan tea.Msg, 64)
	var start func(tea.Cmd)
	start = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			switch msg := c().(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					start(c)
				}
			default:
				select {
				case msgs <- msg:
				case <-ctx.Done():
				}
			}
		}()
	}
	start(m.Init())
	reloads := 0
	state := ""
	for {
		select {
		case <-ctx.Done():
			fmt.Printf("stopped after %d reloads\n", reloads)
			return nil
		case msg := <-msgs:
			_, c := m.Update(msg)
			_ = m.View() // what the renderer would draw
			start(c)
			switch msg := msg.(type) {
			case tui.DataMsg:
				reloads++
				errText := ""
				if msg.Err != nil {
					errText = " error: " + msg.Err.Error()
				}
				w, r := workers(m)
				fmt.Printf("reload %d %d %d %s%s\n", reloads, w, r, m.WatchState().State, errText)
			case tui.WatchMsg:
				if s := m.WatchState(); s.State != state {
					state = s.State
					fmt.Printf("watch %s %s\n", s.State, s.Detail)
				}
			}
		}
	}
}

// workers counts the workers of the deployments shown, and the ready ones.
func workers(m *tui.Model) (n, ready int) {
	d := m.Data()
	if d == nil {
		return 0, 0
	}
	for _, dep := range d.Snapshot.Deployments {
		n += len(dep.Workers)
		for _, w := range dep.Workers {
			if w.Ready {
				ready++
			}
		}
	}
	return n, ready
}
