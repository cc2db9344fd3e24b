package plot

import (
	"errors"
	"io"
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// MinWidth is the narrowest Terminal draws; a smaller width is taken as this.
const MinWidth = 40

const (
	// maxRows is the most domain rows of a variant; past it the busiest
	// maxRows-1 are shown and a line counts the others.
	maxRows = 12
	// valueWidth is the right-hand column (a row's peak or failed total).
	valueWidth = 6
)

var levels = []rune("▁▂▃▄▅▆▇█")

// Terminal writes r as a text chart at most width columns wide (MinWidth
// at least): per variant its name and headline figures, then per domain a
// sparkline of the decode load over virtual time, all rows on one scale and
// one time axis, with the row's peak on the right, and a row of failed
// requests (· none, ▪ under half the bucket's requests, █ half or more). Text
// from the cluster is escaped (termsafe.Escape) and cut in the middle to fit;
// the output has no escape sequences.
func Terminal(w io.Writer, r *simulate.Report, width int) error {
	if r == nil {
		return errors.New("plot: no report")
	}
	width = max(width, MinWidth)
	t := newTermChart(r, width)
	var b strings.Builder
	t.write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// termChart is a report prepared for the terminal.
type termChart struct {
	r      *simulate.Report
	width  int
	axes   []timeAxis
	yMax   float64 // the shared scale: █
	tEnd   float64 // the shared time axis' end, s
	cols   int     // sparkline columns
	span   float64 // seconds a column
	nameW  int
	sparkW int // room for the sparkline (cols ≤ sparkW)
}

func newTermChart(r *simulate.Report, width int) *termChart {
	t := &termChart{r: r, width: width}
	minBucket := math.Inf(1)
	names := termsafe.Width("failed")
	for _, v := range r.Variants {
		ax := newTimeAxis(v.Series)
		t.axes = append(t.axes, ax)
		t.tEnd = max(t.tEnd, ax.end())
		if len(ax.start) > 0 {
			minBucket = min(minBucket, ax.bucket)
		}
		t.yMax = max(t.yMax, maxDecode(v))
		for _, d := range v.Domains {
			names = max(names, termsafe.Width(domainLabel(d.Value)))
		}
	}
	// Indent, name, space, sparkline, space, value.
	t.nameW = min(names, (width-2)/3)
	t.sparkW = width - 2 - t.nameW - 1 - 1 - valueWidth
	if t.tEnd > 0 {
		// In float first: a hostile start time must not overflow an int.
		t.cols = max(1, int(math.Min(float64(t.sparkW), math.Ceil(t.tEnd/minBucket-1e-9))))
		t.span = t.tEnd / float64(t.cols)
	}
	return t
}

// domainLabel is a domain value as a row names it: escaped, "(none)" when
// empty.
func domainLabel(v string) string {
	if v == "" {
		return "(none)"
	}
	// U+FFFE and U+FFFF are not characters: terminals disagree on their width.
	return termsafe.Escape(strings.NewReplacer("\ufffe", "\ufffd", "\uffff", "\ufffd").Replace(v))
}

func (t *termChart) write(b *strings.Builder) {
	r := t.r
	key := "domain"
	if r.DomainKey != "" {
		key = termsafe.Truncate(termsafe.Escape(r.DomainKey), 24)
	}
	head := []string{"decode load per " + key + ": █ = " + number(t.yMax) + " active sequences on every row"}
	if t.cols > 0 {
		head = append(head, "0–"+number(t.tEnd)+" s of virtual time, "+number(t.span)+" s a column",
			"failed: · none  ▪ some  █ half or more")
	}
	t.wrap(b, "", "; ", head...)
	if len(r.Variants) == 0 {
		t.line(b, "")
		t.line(b, "no variants to plot")
	}
	for i := range r.Variants {
		t.line(b, "")
		t.variant(b, i)
	}
}

// line writes s cut to the width (an ellipsis at the end).
func (t *termChart) line(b *strings.Builder, s string) {
	if termsafe.Width(s) > t.width {
		s = ansi.Truncate(s, t.width, "…")
	}
	b.WriteString(strings.TrimRight(s, " "))
	b.WriteByte('\n')
}

func (t *termChart) variant(b *strings.Builder, i int) {
	v := t.r.Variants[i]
	name := "(unnamed variant)"
	if v.Name != "" {
		name = termsafe.Escape(v.Name)
	}
	t.line(b, termsafe.Truncate(name, t.width))
	req := v.Requests
	if req <= 0 {
		req = v.Routed + v.Failed
	}
	t.wrap(b, "  ", " · ",
		"routed "+percent(v.Routed, req)+" of "+count(req),
		"failed "+count(v.Failed)+" ("+percent(v.Failed, req)+")",
		"cross-domain "+count(v.CrossDomainTransfers),
		"KV hit "+rate(v.HitRate))
	if len(v.Series.Buckets) == 0 || t.cols == 0 {
		t.line(b, "  no time series (no buckets)")
		return
	}
	ax := t.axes[i]
	shown := make([]int, len(v.Domains))
	for d := range shown {
		shown[d] = d
	}
	hidden := 0
	if len(v.Domains) > maxRows {
		peaks := make([]float64, len(v.Domains))
		for d := range peaks {
			peaks[d] = domainPeak(v.Series, d)
		}
		shown = busiest(peaks, maxRows-1)
		hidden = len(v.Domains) - len(shown)
	}
	for _, d := range shown {
		spark := t.sparkline(ax, v.Series, d)
		t.row(b, domainLabel(v.Domains[d].Value), spark, number(domainPeak(v.Series, d)))
	}
	if hidden > 0 {
		t.line(b, "  +"+count(hidden)+" more, none busier than those shown")
	}
	fails, total := t.failures(ax, v.Series)
	t.row(b, "failed", fails, count(total))
}

// row writes one named row: the name cut in the middle to its column, the
// cells, the value right-aligned after them.
func (t *termChart) row(b *strings.Builder, name string, cells []rune, value string) {
	name = termsafe.Truncate(name, t.nameW)
	var s strings.Builder
	s.WriteString("  ")
	s.WriteString(name)
	s.WriteString(strings.Repeat(" ", t.nameW-termsafe.Width(name)+1))
	s.WriteString(string(cells))
	s.WriteString(strings.Repeat(" ", t.cols-len(cells)+1))
	s.WriteString(strings.Repeat(" ", max(0, valueWidth-termsafe.Width(value))))
	s.WriteString(value)
	t.line(b, s.String())
}

// column is the sparkline column a bucket falls in (by its middle).
func (t *termChart) column(ax timeAxis, k int) int {
	c := int((ax.start[k] + ax.bucket/2) / t.span)
	return min(max(c, 0), t.cols-1)
}

// sparkline is domain d's decode load, a column the highest of its buckets:
// blank for none or zero, ▁…█ in eighths of the shared scale (any load at
// least ▁), ? where no bucket had a value that can be drawn.
func (t *termChart) sparkline(ax timeAxis, s simulate.Series, d int) []rune {
	peak := make([]float64, t.cols)
	seen := make([]int, t.cols) // 0 no bucket, 1 no drawable value, 2 a value
	for k, p := range s.Buckets {
		c := t.column(ax, k)
		seen[c] = max(seen[c], 1)
		dp, ok := domainPoint(p, d)
		if !ok {
			continue
		}
		if x, ok := load(dp.DecodeLoad); ok {
			peak[c] = max(peak[c], x)
			seen[c] = 2
		}
	}
	out := make([]rune, t.cols)
	for c := range out {
		switch {
		case seen[c] == 0:
			out[c] = ' '
		case seen[c] == 1:
			out[c] = '?'
		case peak[c] == 0 || t.yMax == 0:
			out[c] = ' '
		default:
			l := int(math.Ceil(peak[c]/t.yMax*float64(len(levels)))) - 1
			out[c] = levels[min(max(l, 0), len(levels)-1)]
		}
	}
	return out
}

// failures is the failed requests per column (· none, ▪ under half of the
// column's requests, █ half or more) and their total.
func (t *termChart) failures(ax timeAxis, s simulate.Series) ([]rune, int) {
	failed := make([]int, t.cols)
	requests := make([]int, t.cols)
	seen := make([]bool, t.cols)
	total := 0
	for k, p := range s.Buckets {
		c := t.column(ax, k)
		f, n := bucketFailed(p)
		failed[c] += f
		requests[c] += n
		seen[c] = true
		total += f
	}
	out := make([]rune, t.cols)
	for c := range out {
		switch {
		case !seen[c]:
			out[c] = ' '
		case failed[c] == 0:
			out[c] = '·'
		case 2*failed[c] < requests[c]:
			out[c] = '▪'
		default:
			out[c] = '█'
		}
	}
	return out, total
}

// wrap writes parts joined by sep on as few lines as the width allows, each
// line starting with indent; a part wider than a line is cut.
func (t *termChart) wrap(b *strings.Builder, indent, sep string, parts ...string) {
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case termsafe.Width(indent+cur+sep+p) <= t.width:
			cur += sep + p
		default:
			t.line(b, indent+cur)
			cur = p
		}
	}
	if cur != "" {
		t.line(b, indent+cur)
	}
}
