package plot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// palette colours the domains, in order: Tableau 10 without its red, which is
// the failures' colour alone (and colour-blind-safe enough for nine lines
// that are also named in the legend).
var palette = []string{
	"#4e79a7", // blue
	"#f28e2b", // orange
	"#59a14f", // green
	"#b07aa1", // purple
	"#76b7b2", // teal
	"#edc948", // yellow
	"#9c755f", // brown
	"#ff9da7", // pink
	"#bcbd22", // olive
}

const (
	failColour  = "#d62728" // failed requests
	otherColour = "#c7c7c7" // domains past the palette
	plotBG      = "#f3f5f8" // the plot areas' background
	gridColour  = "#dfe3e8"
	textColour  = "#1f2328"
	mutedColour = "#59636e"

	// maxGrey is how many domains past the coloured ones are drawn, in grey
	// (the busiest); the others are only counted in the legend.
	maxGrey = 40

	svgWidth  = 1200
	margin    = 20
	gap       = 20
	panelH    = 330
	plotLeft  = 64 // from the panel's left edge
	plotRight = 16 // from the panel's right edge
	plotTop   = 70
	plotH     = 170
	stripTop  = plotTop + plotH + 10
	stripH    = 36
	fontSize  = 12
)

// rect is a rectangle in SVG user units (pixels at scale 1).
type rect struct{ x, y, w, h float64 }

// layout is where things are: the tests read it to look at the right pixels.
type layout struct {
	height  float64
	legendY float64 // top of the legend
	panels  []panelLayout
}

// panelLayout is one variant's panel.
type panelLayout struct {
	card, plot, strip rect
}

// chart is a report prepared for drawing: the domains of every variant under
// one colour each, the shared scales and the layout.
type chart struct {
	r       *simulate.Report
	domains []string       // union of the variants' domain values, first seen first
	index   map[string]int // domain value → index in domains
	colour  []string       // per domain: its colour, or "" when not drawn
	more    int            // domains not in the palette
	axes    []timeAxis     // per variant
	tTop    float64        // the time axis' end, s
	tStep   float64
	yTop    float64 // the load axis' top
	yStep   float64
	fTop    float64 // the failures strip's top (failed requests per bucket)
	lay     layout
	legend  []legendItem
}

// SVG writes r as a standalone SVG document: a panel per variant, all on the
// same axes, with each domain's decode load (solid) and prefill load (dashed)
// over virtual time, the failed requests per bucket as red bars under it, and
// the variant's name and headline figures (routed, failed, cross-domain
// transfers, KV hit rate) above it; a legend names the domains' colours.
func SVG(w io.Writer, r *simulate.Report) error {
	if r == nil {
		return errors.New("plot: no report")
	}
	c := newChart(r)
	var b bytes.Buffer
	c.write(&b)
	_, err := w.Write(b.Bytes())
	return err
}

func newChart(r *simulate.Report) *chart {
	c := &chart{r: r, index: map[string]int{}}
	var peaks []float64
	for _, v := range r.Variants {
		for d, dom := range v.Domains {
			u, ok := c.index[dom.Value]
			if !ok {
				u = len(c.domains)
				c.index[dom.Value] = u
				c.domains = append(c.domains, dom.Value)
				peaks = append(peaks, 0)
			}
			peaks[u] = max(peaks[u], domainPeak(v.Series, d))
		}
	}
	c.colour = make([]string, len(c.domains))
	coloured := busiest(peaks, len(palette))
	for i, u := range coloured {
		c.colour[u] = palette[i]
	}
	if len(c.domains) > len(palette) {
		c.more = len(c.domains) - len(palette)
		rest := make([]float64, len(peaks))
		for u := range rest {
			rest[u] = -1 // coloured: not a candidate
			if c.colour[u] == "" {
				rest[u] = peaks[u]
			}
		}
		for _, u := range busiest(rest, min(maxGrey, c.more)) {
			c.colour[u] = otherColour
		}
	}

	var tMax, yMax, fMax float64
	for _, v := range r.Variants {
		ax := newTimeAxis(v.Series)
		c.axes = append(c.axes, ax)
		tMax = max(tMax, ax.end())
		for _, p := range v.Series.Buckets {
			for d := range v.Domains {
				dp, ok := domainPoint(p, d)
				if !ok || c.colour[c.index[v.Domains[d].Value]] == "" {
					continue
				}
				if x, ok := load(dp.DecodeLoad); ok {
					yMax = max(yMax, x)
				}
				if x, ok := load(dp.PrefillLoad); ok {
					yMax = max(yMax, x)
				}
			}
			f, _ := bucketFailed(p)
			fMax = max(fMax, float64(f))
		}
	}
	c.tTop, c.tStep = niceScale(tMax, 6)
	c.yTop, c.yStep = niceScale(yMax, 4)
	c.fTop, _ = niceScale(fMax, 1)
	c.place()
	return c
}

// legendItem is one entry of the legend: a sample (line, dashed line, bar or
// nothing) and its label.
type legendItem struct {
	kind   string // "line", "dash", "bar", "text"
	colour string
	label  string // escaped
	x, y   float64
}

// place lays out the legend and the panels.
func (c *chart) place() {
	// The domains first (the line colours), then, on a row of its own, what
	// the line styles and the bars are.
	var items []legendItem
	if len(c.domains) > 0 {
		key := "domain"
		if c.r.DomainKey != "" {
			key = c.r.DomainKey
		}
		items = append(items, legendItem{kind: "text", label: svgText(key, 24) + ":"})
	}
	for u, name := range c.domains {
		if col := c.colour[u]; col != "" && col != otherColour {
			items = append(items, legendItem{kind: "line", colour: col, label: svgText(orDefault(name, "(none)"), 28)})
		}
	}
	if c.more > 0 {
		label := fmt.Sprintf("+%s more (in grey)", count(c.more))
		if c.more > maxGrey {
			label = fmt.Sprintf("+%s more (the %d busiest in grey)", count(c.more), maxGrey)
		}
		items = append(items, legendItem{kind: "line", colour: otherColour, label: label})
	}
	domainItems := len(items)
	items = append(items,
		legendItem{kind: "line", colour: mutedColour, label: "decode load (active sequences)"},
		legendItem{kind: "dash", colour: mutedColour, label: "prefill load (requests in flight)"},
		legendItem{kind: "bar", colour: failColour, label: "failed requests per bucket (own scale)"},
	)
	c.lay.legendY = 64
	x, y := float64(margin), c.lay.legendY
	for i := range items {
		w := legendWidth(items[i])
		if x > margin && (x+w > svgWidth-margin || i == domainItems) {
			x, y = margin, y+20
		}
		items[i].x, items[i].y = x, y
		x += w + 18
	}
	c.legend = items

	top := y + 30
	cols := 2
	if len(c.r.Variants) < 2 {
		cols = 1
	}
	pw := float64(svgWidth-2*margin-gap*(cols-1)) / float64(cols)
	for i := range c.r.Variants {
		px := float64(margin) + float64(i%cols)*(pw+gap)
		py := top + float64(i/cols)*(panelH+gap)
		c.lay.panels = append(c.lay.panels, panelLayout{
			card:  rect{px, py, pw, panelH},
			plot:  rect{px + plotLeft, py + plotTop, pw - plotLeft - plotRight, plotH},
			strip: rect{px + plotLeft, py + stripTop, pw - plotLeft - plotRight, stripH},
		})
	}
	rows := (len(c.r.Variants) + cols - 1) / cols
	if rows == 0 {
		rows = 1 // room for the "no variants" message
	}
	c.lay.height = top + float64(rows)*(panelH+gap) + 20
}

// legendWidth estimates an item's width: the sample and the label at about
// 0.6 em a character (no font metrics in an SVG writer).
func legendWidth(it legendItem) float64 {
	w := textWidth(it.label, fontSize)
	if it.kind != "text" {
		w += 28
	}
	return w
}

// textWidth estimates the width of escaped text at size px.
func textWidth(escaped string, size float64) float64 {
	return float64(termsafe.Width(unescapeXML.Replace(escaped))) * 0.6 * size
}

// fits is how many display cells of text fit in px at size.
func fits(px, size float64) int { return max(4, int(px/(0.6*size))) }

func (c *chart) write(b *bytes.Buffer) {
	r := c.r
	dep := svgText(r.Namespace, 60) + "/" + svgText(r.Deployment, 60)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%s" viewBox="0 0 %d %s" font-family="DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif" font-size="%d" fill="%s">`+"\n",
		svgWidth, f1(c.lay.height), svgWidth, f1(c.lay.height), fontSize, textColour)
	fmt.Fprintf(b, "<title>Simulated routing of %s</title>\n", dep)
	fmt.Fprintf(b, "<desc>kubectl dynamo simulate: per variant, load per %s over virtual time and failed requests per bucket.</desc>\n", svgText(orDefault(r.DomainKey, "domain"), 40))
	fmt.Fprintf(b, `<rect width="%d" height="%s" fill="#ffffff"/>`+"\n", svgWidth, f1(c.lay.height))
	text(b, margin, 30, 18, "bold", textColour, "", "Simulated routing · "+dep)
	text(b, margin, 48, fontSize, "", mutedColour, "", c.subtitle())
	c.writeLegend(b)
	if len(r.Variants) == 0 {
		text(b, margin, c.lay.height-panelH/2, 14, "", mutedColour, "", "No variants to plot.")
	}
	for i := range r.Variants {
		c.writePanel(b, i)
	}
	b.WriteString("</svg>\n")
}

// subtitle is the model, the traffic and the engine model, cut to the width.
func (c *chart) subtitle() string {
	r := c.r
	var parts []string
	if r.Model != "" {
		parts = append(parts, "model "+svgText(r.Model, 50))
	}
	trace := "trace " + svgText(orDefault(r.Trace.Source, "?"), 60)
	if r.Trace.Format != "" {
		trace += " (" + svgText(r.Trace.Format, 24) + ")"
	}
	parts = append(parts, trace, count(r.Trace.Requests)+" requests")
	if s, ok := load(r.Trace.Speedup); ok && s != 1 && s != 0 {
		parts = append(parts, "speedup ×"+number(s))
	}
	parts = append(parts, fmt.Sprintf("seed %d", r.Seed))
	if r.Engine.Source != "" {
		parts = append(parts, "timings are estimates of the engine model ("+svgText(r.Engine.Source, 40)+")")
	}
	return strings.Join(parts, " · ")
}

func (c *chart) writeLegend(b *bytes.Buffer) {
	b.WriteString(`<g font-size="12">` + "\n")
	for _, it := range c.legend {
		y := it.y + 10
		tx := it.x + 28
		switch it.kind {
		case "line":
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"/>`+"\n", f1(it.x), f1(y-4), f1(it.x+22), f1(y-4), it.colour)
		case "dash":
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="5 3"/>`+"\n", f1(it.x), f1(y-4), f1(it.x+22), f1(y-4), it.colour)
		case "bar":
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="8" height="12" fill="%s"/>`+"\n", f1(it.x+7), f1(y-10), it.colour)
		default:
			tx = it.x
		}
		text(b, tx, y, 0, "", "", "", it.label)
	}
	b.WriteString("</g>\n")
}

func (c *chart) writePanel(b *bytes.Buffer, i int) {
	v := c.r.Variants[i]
	pl := c.lay.panels[i]
	card, plot, strip := pl.card, pl.plot, pl.strip
	h := newHeadline(v)
	fmt.Fprintf(b, "<g>\n")
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" rx="6" fill="#ffffff" stroke="#d0d7de"/>`+"\n", f1(card.x), f1(card.y), f1(card.w), f1(card.h))
	// The title is cut to an estimate of what fits; the clip keeps a name of
	// wide glyphs (WWW…) inside the card.
	fmt.Fprintf(b, `<clipPath id="title-%d"><rect x="%s" y="%s" width="%s" height="60"/></clipPath>`+"\n", i, f1(card.x+4), f1(card.y), f1(card.w-8))
	fmt.Fprintf(b, `<g clip-path="url(#title-%d)">`+"\n", i)
	text(b, card.x+12, card.y+22, 14, "bold", textColour, "", svgText(orDefault(v.Name, "(unnamed variant)"), fits(card.w-24, 14*1.1)))
	text(b, card.x+12, card.y+40, fontSize, "", textColour, "", h.routed+" · "+h.failed)
	text(b, card.x+12, card.y+56, fontSize, "", mutedColour, "", h.cross+" · "+h.hit)
	b.WriteString("</g>\n")

	// The load plot: background, grid, ticks.
	rectFill(b, plot, plotBG)
	ys := func(x float64) float64 { return plot.y + plot.h - x/c.yTop*plot.h }
	xs := func(t float64) float64 { return plot.x + t/c.tTop*plot.w }
	for k := 0; ; k++ {
		y := float64(k) * c.yStep
		if y > c.yTop+c.yStep/1e6 {
			break
		}
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", f1(plot.x), f1(ys(y)), f1(plot.x+plot.w), f1(ys(y)), gridColour)
		text(b, plot.x-6, ys(y)+4, 11, "", mutedColour, "end", number(y))
	}
	for k := 0; ; k++ {
		t := float64(k) * c.tStep
		if t > c.tTop+c.tStep/1e6 {
			break
		}
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", f1(xs(t)), f1(plot.y), f1(xs(t)), f1(strip.y+strip.h), gridColour)
		text(b, xs(t), strip.y+strip.h+14, 11, "", mutedColour, "middle", number(t))
	}
	cy := plot.y + plot.h/2
	fmt.Fprintf(b, `<text x="%s" y="%s" font-size="11" fill="%s" text-anchor="middle" transform="rotate(-90 %s %s)">load (sequences / requests)</text>`+"\n",
		f1(card.x+16), f1(cy), mutedColour, f1(card.x+16), f1(cy))
	text(b, plot.x+plot.w/2, strip.y+strip.h+30, 11, "", mutedColour, "middle", "virtual time (s)")

	ax := c.axes[i]
	if len(v.Series.Buckets) == 0 {
		text(b, plot.x+plot.w/2, cy+4, fontSize, "", mutedColour, "middle", "no time series (no buckets)")
	}
	// Grey domains first, the coloured ones over them; prefill under decode.
	for _, grey := range []bool{true, false} {
		for _, decode := range []bool{false, true} {
			if grey && !decode {
				continue // grey domains show decode only
			}
			for d, dom := range v.Domains {
				col := c.colour[c.index[dom.Value]]
				if col == "" || (col == otherColour) != grey {
					continue
				}
				val := func(p simulate.DomainPoint) float64 { return p.PrefillLoad }
				what, attrs := "prefill load", ` stroke-width="1.5" stroke-dasharray="5 3"`
				if decode {
					val = func(p simulate.DomainPoint) float64 { return p.DecodeLoad }
					what, attrs = "decode load", ` stroke-width="2"`
					if grey {
						attrs = ` stroke-width="1"`
					}
				}
				path := linePath(ax, v.Series, d, val, xs, ys)
				if path == "" {
					continue
				}
				fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s"%s stroke-linejoin="round" stroke-linecap="round"><title>%s: %s</title></path>`+"\n",
					path, col, attrs, svgText(orDefault(dom.Value, "(none)"), 60), what)
			}
		}
	}

	// The failures strip.
	rectFill(b, strip, plotBG)
	text(b, plot.x-6, strip.y+14, 11, "", mutedColour, "end", "failed")
	text(b, plot.x-6, strip.y+28, 9, "", mutedColour, "end", "0–"+number(c.fTop))
	drawn := false
	for k, p := range v.Series.Buckets {
		f, _ := bucketFailed(p)
		if f <= 0 {
			continue
		}
		drawn = true
		x0, x1 := xs(ax.start[k]), xs(ax.start[k]+ax.bucket)
		bh := max(1.5, float64(f)/c.fTop*strip.h)
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s failed from %s s</title></rect>`+"\n",
			f1(x0), f1(strip.y+strip.h-bh), f1(max(1, x1-x0-1)), f1(bh), failColour, count(f), number(ax.start[k]))
	}
	if !drawn && len(v.Series.Buckets) > 0 {
		msg := "no failed requests"
		if v.Failed > 0 {
			msg = "no failed requests in the time series"
		}
		text(b, strip.x+strip.w/2, strip.y+strip.h/2+4, 11, "", mutedColour, "middle", msg)
	}
	b.WriteString("</g>\n")
}

// linePath is the SVG path of one domain's values over the buckets, through
// the buckets' middles; a value that cannot be drawn leaves a gap, and a value
// alone between gaps (or the only bucket) is a level across its bucket.
func linePath(ax timeAxis, s simulate.Series, d int, val func(simulate.DomainPoint) float64, xs, ys func(float64) float64) string {
	var b strings.Builder
	var run []int
	var ypos []float64
	flush := func() {
		switch len(run) {
		case 0:
		case 1:
			k := run[0]
			fmt.Fprintf(&b, "M%s %sH%s", f1(xs(ax.start[k])), f1(ypos[0]), f1(xs(ax.start[k]+ax.bucket)))
		default:
			for j, k := range run {
				op := "L"
				if j == 0 {
					op = "M"
				}
				fmt.Fprintf(&b, "%s%s %s", op, f1(xs(ax.start[k]+ax.bucket/2)), f1(ypos[j]))
			}
		}
		run, ypos = run[:0], ypos[:0]
	}
	for k, p := range s.Buckets {
		dp, ok := domainPoint(p, d)
		var x float64
		if ok {
			x, ok = load(val(dp))
		}
		if !ok {
			flush()
			continue
		}
		run = append(run, k)
		ypos = append(ypos, ys(x))
	}
	flush()
	return b.String()
}

// text writes a <text> element; size 0, weight "", fill "" and anchor ""
// inherit. s must be escaped already.
func text(b *bytes.Buffer, x, y, size float64, weight, fill, anchor, s string) {
	fmt.Fprintf(b, `<text x="%s" y="%s"`, f1(x), f1(y))
	if size > 0 {
		fmt.Fprintf(b, ` font-size="%s"`, f1(size))
	}
	if weight != "" {
		fmt.Fprintf(b, ` font-weight="%s"`, weight)
	}
	if fill != "" {
		fmt.Fprintf(b, ` fill="%s"`, fill)
	}
	if anchor != "" {
		fmt.Fprintf(b, ` text-anchor="%s"`, anchor)
	}
	fmt.Fprintf(b, ">%s</text>\n", s)
}

func rectFill(b *bytes.Buffer, r rect, fill string) {
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", f1(r.x), f1(r.y), f1(r.w), f1(r.h), fill)
}

// f1 formats a coordinate with at most one decimal.
func f1(v float64) string { return trim(v, 1) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var (
	escapeXML   = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")
	unescapeXML = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'")
)

// svgText makes text from the cluster safe for an SVG document: bytes that
// are not UTF-8 become U+FFFD, line breaks and tabs spaces, control,
// bidi and invisible formatting characters (termsafe.Unsafe) and the XML
// non-characters U+FFFE and U+FFFF are dropped; the result is cut to at most
// limit display cells (an ellipsis in the middle) and XML-escaped.
func svgText(s string, limit int) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case termsafe.Unsafe(r), r == 0xfffe, r == 0xffff:
		default:
			b.WriteRune(r)
		}
	}
	return escapeXML.Replace(termsafe.Truncate(strings.TrimSpace(b.String()), limit))
}
