package routecore

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// selSequential is a selParallelMin no input reaches: every phase runs in one part.
const selSequential = math.MaxInt

// selWithProcs sets GOMAXPROCS for the rest of the test, so the parallel path
// splits into more parts than the machine has cores.
func selWithProcs(t testing.TB, procs int) {
	t.Helper()
	old := runtime.GOMAXPROCS(procs)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// selWithParallelMin sets selParallelMin for the rest of the test.
func selWithParallelMin(t testing.TB, n int) {
	t.Helper()
	old := selParallelMin
	selParallelMin = n
	t.Cleanup(func() { selParallelMin = old })
}

// selBitDiff returns the path of the first difference between a and b, or "".
// Floats compare by their bits (+0 and −0 differ; a NaN equals only the same
// NaN), everything else as reflect.DeepEqual would.
func selBitDiff(path string, a, b reflect.Value) string {
	if a.Kind() != b.Kind() {
		return path
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s (%v vs %v)", path, a.Float(), b.Float())
		}
		return ""
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path
			}
			return ""
		}
		return selBitDiff(path, a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Sprintf("%s (len %d vs %d)", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := selBitDiff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Struct:
		for i := range a.NumField() {
			if d := selBitDiff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Sprintf("%s (%v vs %v)", path, a.Interface(), b.Interface())
	}
	return ""
}

// selHasNaN reports whether a decision holds a NaN anywhere (reflect.DeepEqual
// then fails even on identical values).
func selHasNaN(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.IsNaN(v.Float())
	case reflect.Pointer:
		return !v.IsNil() && selHasNaN(v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			if selHasNaN(v.Index(i)) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if selHasNaN(v.Field(i)) {
				return true
			}
		}
	}
	return false
}

// selSameDecision requires two decisions (and errors) to be identical: equal under
// reflect.DeepEqual (unless NaNs, which DeepEqual never equates, are present)
// and bit for bit in every float.
func selSameDecision(t *testing.T, what string, got, want Decision, gotErr, wantErr error) {
	t.Helper()
	refSameError(t, gotErr, wantErr)
	if !reflect.DeepEqual(got, want) && !selHasNaN(reflect.ValueOf(want)) {
		if d := selBitDiff("Decision", reflect.ValueOf(got), reflect.ValueOf(want)); d != "" {
			t.Fatalf("%s: decisions differ at %s", what, d)
		}
		t.Fatalf("%s: decisions differ under reflect.DeepEqual", what)
	}
	if d := selBitDiff("Decision", reflect.ValueOf(got), reflect.ValueOf(want)); d != "" {
		t.Fatalf("%s: decisions differ at %s", what, d)
	}
}

// selParallelInput is refGen's input, made larger and bent towards the cases
// where parts must be merged with care: ties across parts (equal loads and no
// overlap), costs that overflow on a few candidates only (a failure in the
// middle of the canonical order), and dense allow-lists.
func selParallelInput(g refGen, maxW int) (KvRouterConfig, BusyThresholds, []Worker, Request, float64) {
	cfg, th, ws, req, u := g.input(maxW)
	if g.chance(0.5) { // workers in id order: validation checks it in parts
		slices.SortFunc(ws, func(a, b Worker) int { return cmp.Compare(a.ID, b.ID) })
	}
	if g.chance(0.25) { // ties
		l := RankLoad{ActivePrefillTokens: uint64(g.n(50)), ActiveDecodeBlocks: uint64(g.n(50)), ActiveRequests: uint64(g.n(3))}
		for i := range ws {
			for r := range ws[i].Loads {
				ws[i].Loads[r] = l
			}
		}
		req.Overlap = OverlapInput{SharedHits: req.Overlap.SharedHits}
		req.AdditionalActiveBlocks = nil
		if g.chance(0.5) {
			cfg.RouterTemperature = 0
			req.Override.RouterTemperature = nil
		}
	}
	if g.chance(0.15) && len(ws) > 0 { // a few candidates overflow the cost
		cfg.PrefillLoadScale = 1e300
		cfg.RouterTrackPrefillTokens = true
		req.Override.TrackPrefillTokens = nil
		for range 1 + g.n(3) {
			w := &ws[g.n(len(ws))]
			if w.Loads == nil {
				w.Loads = map[uint32]RankLoad{}
			}
			start, _ := w.Runtime.DpRange()
			w.Loads[start] = RankLoad{ActivePrefillTokens: math.MaxUint64}
		}
	}
	if g.chance(0.1) && len(ws) > 0 { // a dense allow-list
		req.AllowedWorkers = nil
		for _, w := range ws {
			if g.chance(0.7) {
				req.AllowedWorkers = append(req.AllowedWorkers, w.ID)
			}
		}
	}
	return cfg, th, ws, req, u
}

// TestSelectParallelMatchesSequential runs random selections with every phase
// forced into several parts and again in one part, and requires identical
// decisions, errors and draw use — with the one-shot functions and with reused
// Selectors — over inputs with NaN and infinite costs, pins, affinity,
// allow-lists, taints, multi-rank workers, ties and T>0.
func TestSelectParallelMatchesSequential(t *testing.T) {
	iters := hermetic.Size(300, 3000, 30000)
	defer func(v int) { selParallelMin = v }(selParallelMin)
	defer func(v int) { runtime.GOMAXPROCS(v) }(runtime.GOMAXPROCS(0))
	g := refGen{r: rand.New(rand.NewPCG(21, 22))}
	var seqSel, parSel Selector
	var seen struct {
		midFailure, ties, softmax, pinned, allowed, multiRank, overloaded, unsorted, sorted int
	}
	for it := range iters {
		runtime.GOMAXPROCS([]int{2, 3, 4, 7}[it%4])
		parallelMin := []int{2, 3, 6, 16}[(it/4)%4]
		maxW := []int{6, 20, 60, 200}[it%4]
		cfg, th, ws, req, u := selParallelInput(g, maxW)
		what := fmt.Sprintf("iteration %d (GOMAXPROCS %d, selParallelMin %d, %d workers)", it, runtime.GOMAXPROCS(0), parallelMin, len(ws))

		selParallelMin = selSequential
		want, wantErr := SelectWithDraw(cfg, th, ws, req, u)
		reuseWant, reuseWantErr := seqSel.SelectWithDraw(cfg, th, ws, req, u)
		sr := &ScriptedRand{Draws: []float64{u}}
		randWant, randWantErr := Select(cfg, th, ws, req, sr)

		selParallelMin = parallelMin
		got, gotErr := SelectWithDraw(cfg, th, ws, req, u)
		selSameDecision(t, what+" SelectWithDraw", got, want, gotErr, wantErr)
		got, gotErr = parSel.SelectWithDraw(cfg, th, ws, req, u)
		selSameDecision(t, what+" Selector.SelectWithDraw", got, reuseWant, gotErr, reuseWantErr)
		pr := &ScriptedRand{Draws: []float64{u}}
		got, gotErr = Select(cfg, th, ws, req, pr)
		selSameDecision(t, what+" Select", got, randWant, gotErr, randWantErr)
		if pr.Calls != sr.Calls {
			t.Fatalf("%s: %d draws, sequentially %d", what, pr.Calls, sr.Calls)
		}

		// What the inputs exercised.
		if wantErr != nil && strings.Contains(wantErr.Error(), "cost for candidate") {
			scored, unscored := 0, 0
			for _, ev := range want.Candidates {
				if ev.Scored {
					scored++
				} else if ev.Eligible && ev.Terms.Logit == 0 {
					unscored++
				}
			}
			if scored > 0 && unscored > 0 {
				seen.midFailure++
			}
		}
		if len(want.TieSet) > 1 {
			seen.ties++
		}
		if wantErr == nil && want.SelectionRule == RuleSoftmaxSample && len(want.Candidates) > 8 {
			seen.softmax++
		}
		if req.Pinned != nil && wantErr == nil {
			seen.pinned++
		}
		if req.AllowedWorkers != nil && wantErr == nil {
			seen.allowed++
		}
		for _, w := range ws {
			if w.Runtime.DataParallelSize > 1 {
				seen.multiRank++
				break
			}
		}
		for _, ev := range want.Candidates {
			if ev.Reason != nil && ev.Reason.Code == ReasonWorkerOverloaded {
				seen.overloaded++
				break
			}
		}
		if slices.IsSortedFunc(ws, func(a, b Worker) int { return cmp.Compare(a.ID, b.ID) }) {
			if len(ws) > 8 {
				seen.sorted++
			}
		} else {
			seen.unsorted++
		}
	}
	// The comparison is only as good as the cases it met.
	need := iters / 100
	for name, n := range map[string]int{"failure in mid order": seen.midFailure, "T=0 ties": seen.ties,
		"softmax picks": seen.softmax, "pinned picks": seen.pinned, "allow-lists": seen.allowed,
		"multi-rank workers": seen.multiRank, "overloaded workers": seen.overloaded, "unsorted workers": seen.unsorted,
		"sorted workers": seen.sorted} {
		if n < need {
			t.Errorf("only %d of %d inputs exercised %s", n, iters, name)
		}
	}
	t.Logf("cases met: %+v", seen)
}

// TestSelectParallelFailureInLaterPart pins down the failure path: the candidate
// whose cost overflows sits in a middle part, parts after it score everything,
// and the result must still be the sequential one — the earliest failure
// reported, every later candidate left with zero terms and unscored.
func TestSelectParallelFailureInLaterPart(t *testing.T) {
	selWithProcs(t, 4)
	ws := make([]Worker, 40)
	for i := range ws {
		ws[i] = Worker{ID: WorkerID(i + 1), Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: uint64(i)}}}
	}
	ws[17].Loads[0] = RankLoad{ActivePrefillTokens: math.MaxUint64}
	ws[31].Loads[0] = RankLoad{ActivePrefillTokens: math.MaxUint64}
	cfg := DefaultKvRouterConfig()
	cfg.PrefillLoadScale = 1e300
	req := Request{ISL: 64, BlockSize: 16, Constraints: RoutingConstraints{PreferredTaints: map[string]float64{"a": 1}}}
	for i := range ws {
		ws[i].Runtime.Taints = []string{"a"}
	}

	selWithParallelMin(t, selSequential)
	want, wantErr := SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.5)
	selParallelMin = 2
	got, gotErr := SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.5)
	selSameDecision(t, "overflow", got, want, gotErr, wantErr)
	if gotErr == nil || !strings.Contains(gotErr.Error(), "cost for candidate 18") || got.ErrorKind != "InvalidRequest" {
		t.Fatalf("error %v (%s), want the overflow of worker 18", gotErr, got.ErrorKind)
	}
	for i, ev := range got.Candidates {
		switch {
		case i < 17 && (!ev.Scored || ev.Terms.Cost == 0):
			t.Fatalf("candidate %d before the failure not scored: %+v", i, ev)
		case i == 17 && (ev.Scored || !math.IsInf(ev.Terms.Cost, 1)):
			t.Fatalf("failing candidate %+v", ev)
		case i > 17 && (ev.Scored || !reflect.DeepEqual(ev.Terms, CostTerms{})):
			t.Fatalf("candidate %d after the failure keeps %+v", i, ev)
		}
	}
}

// TestSelectParallelTiesAcrossParts puts equal minimum costs in every part: the
// tie set, its probabilities and the pick must match the sequential selection.
func TestSelectParallelTiesAcrossParts(t *testing.T) {
	selWithProcs(t, 5)
	ws := make([]Worker, 50)
	for i := range ws {
		ws[i] = Worker{ID: WorkerID(100 - 2*i), Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: uint64(i%7) * 16}}}
	}
	req := Request{ISL: 64, BlockSize: 16}
	for _, temp := range []float64{0, 0.5} {
		cfg := DefaultKvRouterConfig()
		cfg.RouterTemperature = temp
		for _, u := range []float64{0, 0.3, 0.999} {
			selWithParallelMin(t, selSequential)
			want, wantErr := SelectWithDraw(cfg, BusyThresholds{}, ws, req, u)
			selParallelMin = 2
			got, gotErr := SelectWithDraw(cfg, BusyThresholds{}, ws, req, u)
			selSameDecision(t, fmt.Sprintf("T=%v u=%v", temp, u), got, want, gotErr, wantErr)
			if temp == 0 && len(got.TieSet) != 8 {
				t.Fatalf("tie set %v, want the 8 unloaded workers", got.TieSet)
			}
		}
	}
}

// TestSelParts checks when selections split and into how many parts.
func TestSelParts(t *testing.T) {
	selWithProcs(t, 4)
	selWithParallelMin(t, 4096)
	for _, c := range []struct{ n, want int }{
		{0, 1}, {1, 1}, {4095, 1}, {4096, 8}, {6143, 8}, {6144, 12}, {8191, 12}, {10_000, 16}, {1 << 20, 16},
	} {
		if got := selParts(c.n); got != c.want {
			t.Errorf("selParts(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	selWithProcs(t, 1)
	if got := selParts(1 << 20); got != 1 {
		t.Errorf("selParts(1<<20) = %d with one core, want 1", got)
	}
	for _, c := range []struct{ n, parts int }{{10, 3}, {7, 7}, {0, 2}, {10_000, 4}} {
		prev := 0
		for i := range c.parts + 1 {
			s := selSplit(c.n, c.parts, i)
			if s < prev || (i == 0 && s != 0) || (i == c.parts && s != c.n) {
				t.Fatalf("selSplit(%d, %d, %d) = %d", c.n, c.parts, i, s)
			}
			prev = s
		}
	}
}

// selPoison sets every field reachable from v to a non-zero value (NaN for
// floats), allocating through nil pointers and slices.
func selPoison(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(math.NaN())
	case reflect.String:
		v.SetString("poison")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		selPoison(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		selPoison(v.Index(0))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				selPoison(v.Field(i))
			}
		}
	}
}

// TestSelectorReuseWritesEveryField fills a Selector's reused memory with
// garbage in every field before each selection: a reused Selector must still
// decide exactly like a fresh one, so every field of every candidate is
// written (the reused evidence is never cleared in a pass of its own).
func TestSelectorReuseWritesEveryField(t *testing.T) {
	iters := hermetic.Size(200, 2000, 20000)
	defer func(v int) { selParallelMin = v }(selParallelMin)
	selWithProcs(t, 3)
	var poison CandidateEvidence
	selPoison(reflect.ValueOf(&poison).Elem())
	g := refGen{r: rand.New(rand.NewPCG(31, 32))}
	var sel Selector
	for it := range iters {
		selParallelMin = []int{selSequential, 2, 5}[it%3]
		cfg, th, ws, req, u := selParallelInput(g, []int{40, 3, 100}[it%3])
		for i := range sel.cands[:cap(sel.cands)] {
			sel.cands[:cap(sel.cands)][i] = poison
		}
		for i := range sel.vis[:cap(sel.vis)] {
			sel.vis[:cap(sel.vis)][i] = selVisit{idx: -1, hasLoad: true, ap: 7, ad: 7, ar: 7}
		}
		for i := range sel.costs[:cap(sel.costs)] {
			sel.costs[:cap(sel.costs)][i] = math.NaN()
		}
		got, gotErr := sel.SelectWithDraw(cfg, th, ws, req, u)
		want, wantErr := SelectWithDraw(cfg, th, ws, req, u)
		selSameDecision(t, fmt.Sprintf("iteration %d", it), got, want, gotErr, wantErr)
	}
	if cap(sel.cands) == 0 {
		t.Fatal("the Selector never kept memory")
	}
}

// TestSelectorGoInjected: routecore starts concurrent work only through the
// injected Go; without it a large selection runs on the caller's goroutine, and
// the decision is the same either way.
func TestSelectorGoInjected(t *testing.T) {
	defer func(f func(func())) { selDefaultGo = f }(selDefaultGo)
	selDefaultGo = nil
	ws, req := selBenchInput(10_000)
	cfg := DefaultKvRouterConfig()
	cfg.RouterTemperature = 0.5
	var spawned atomic.Int64
	withGo := Selector{Go: func(f func()) { spawned.Add(1); go f() }}
	got, err := withGo.SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOMAXPROCS(0) > 1 && spawned.Load() == 0 {
		t.Error("a 10,000-candidate selection with Go injected did not use it")
	}
	before := runtime.NumGoroutine()
	var none Selector
	want, err := none.SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("the decision differs with and without Go")
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("goroutines %d -> %d without Go", before, after)
	}
	if d, err := SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.3); err != nil || !reflect.DeepEqual(d, want) {
		t.Errorf("package-level SelectWithDraw differs: %v", err)
	}
}
