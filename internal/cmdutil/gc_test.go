package cmdutil

import (
	"runtime/debug"
	"testing"
)

func TestTuneGCForOneShot(t *testing.T) {
	for _, percent := range []int{GCReport, 400} {
		t.Setenv("GOGC", "")
		t.Setenv("GOMEMLIMIT", "")
		before := debug.SetGCPercent(-1)
		debug.SetGCPercent(before)
		beforeLimit := debug.SetMemoryLimit(-1)
		restore := TuneGCForOneShot(percent)
		if got := debug.SetGCPercent(percent); got != percent {
			t.Errorf("GC percent %d, want %d", got, percent)
		}
		if got := debug.SetMemoryLimit(-1); got != oneShotMemoryLimit {
			t.Errorf("memory limit %d, want %d", got, oneShotMemoryLimit)
		}
		restore()
		if got := debug.SetGCPercent(-1); got != before {
			t.Errorf("restored GC percent %d, want %d", got, before)
		}
		debug.SetGCPercent(before)
		if got := debug.SetMemoryLimit(-1); got != beforeLimit {
			t.Errorf("restored memory limit %d, want %d", got, beforeLimit)
		}
	}
}

func TestTuneGCForOneShotRespectsEnvironment(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(env, "150")
			before := debug.SetGCPercent(-1)
			debug.SetGCPercent(before)
			restore := TuneGCForOneShot(GCReport)
			defer restore()
			if got := debug.SetGCPercent(-1); got != before {
				t.Errorf("with %s set, GC percent changed to %d", env, got)
			}
			debug.SetGCPercent(before)
		})
	}
}
