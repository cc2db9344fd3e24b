package kubeenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one control-plane child process with its output in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{} // closed when the process has exited and been reaped
	waitErr error         // valid after done is closed
}

var (
	liveMu      sync.Mutex
	live        = map[*process]struct{}{}
	signalsOnce sync.Once
)

// startProcess starts path with args in its own process group, output to logPath.
func startProcess(name, path string, args []string, logPath string) (*process, error) {
	signalsOnce.Do(installSignalHandler)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "+ %s %s\n", path, strings.Join(args, " "))
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr()
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	liveMu.Lock()
	defer liveMu.Unlock()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	live[p] = struct{}{}
	go func() {
		p.waitErr = cmd.Wait()
		f.Close()
		liveMu.Lock()
		delete(live, p)
		liveMu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process id, which is also its process-group id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an unexpected exit, with the tail of the log.
func (p *process) exitError() error {
	cause := p.waitErr
	if cause == nil {
		cause = errors.New("exit status 0")
	}
	return fmt.Errorf("%s exited early (%w); last lines of %s:\n%s", p.name, cause, p.logPath, p.tail(40))
}

// stop kills the process group and waits until the process is reaped. The
// control plane is throwaway, so there is no graceful shutdown: SIGKILL is fast
// and leaves nothing behind.
func (p *process) stop(timeout time.Duration) error {
	killGroup(p.pid())
	select {
	case <-p.done:
	case <-time.After(timeout):
		return fmt.Errorf("%s (pid %d) did not exit within %v after SIGKILL", p.name, p.pid(), timeout)
	}
	// Anything the process left in its group (it starts no children today).
	killGroup(p.pid())
	return nil
}

func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// groupAlive reports whether any process is left in process group pgid.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// tail returns the last n lines of the log file.
func (p *process) tail(n int) string { return tailFile(p.logPath, n) }

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		if _, err := f.Seek(st.Size()-maxRead, io.SeekStart); err != nil {
			return err.Error()
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\t" + string(bytes.Join(lines, []byte("\n\t")))
}

// installSignalHandler kills every live child on SIGINT/SIGTERM/SIGHUP and then
// re-raises the signal with its default action, so the test binary dies as it
// would have (or exits with status 2 if it is still running a moment later).
func installSignalHandler() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-ch
		killAll()
		signal.Reset(sig)
		if s, ok := sig.(syscall.Signal); ok {
			_ = syscall.Kill(os.Getpid(), s)
		}
		os.Exit(2) // only reached if the re-raised signal was ignored
	}()
}

// killAll kills every child process this package has started and not yet reaped.
func killAll() {
	liveMu.Lock()
	defer liveMu.Unlock()
	for p := range live {
		killGroup(p.pid())
	}
}

// poll calls cond every interval until it returns true or an error, the
// context ends, or one of the watched processes exits.
func poll(ctx context.Context, interval time.Duration, what string, watch []*process, cond func(context.Context) (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		for _, p := range watch {
			if p.exited() {
				return p.exitError()
			}
		}
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("timed out waiting for %s: %w (last error: %w)", what, ctx.Err(), last)
			}
			return fmt.Errorf("timed out waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

// WaitFor calls cond every 50ms until it returns true, or ctx ends; then the
// error says what was awaited and the last error cond returned. Use it for
// anything that becomes true asynchronously (RBAC bindings taking effect,
// informer caches, audit events) instead of sleeping.
func WaitFor(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	return poll(ctx, 50*time.Millisecond, what, nil, cond)
}
