package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

// cases are the reports every renderer is tested with.
var cases = []struct {
	name   string
	report func() *simulate.Report
}{
	{"three-variants", threeVariants},
	{"one-domain", oneDomain},
	{"one-bucket", oneBucket},
	{"no-buckets", noBuckets},
	{"no-variants", func() *simulate.Report { return report() }},
	{"non-finite", nonFinite},
	{"many-domains", manyDomains},
	{"hostile-names", hostile},
}

func renderSVG(t *testing.T, r *simulate.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := SVG(&b, r); err != nil {
		t.Fatalf("SVG: %v", err)
	}
	return b.Bytes()
}

// TestSVG compares each case with its golden SVG (testdata/TestSVG/<case>.svg,
// which a browser opens) and checks what must hold of any output: well-formed
// XML whose root is an svg element, nothing that runs or loads (no script,
// no event handler, no reference but the SVG namespace), no control
// characters, no text longer than its cap, and the same bytes every time.
func TestSVG(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := renderSVG(t, tc.report())
			golden.AssertFile(t, filepath.Join("testdata", filepath.FromSlash(t.Name())+".svg"), got)
			if again := renderSVG(t, tc.report()); !bytes.Equal(got, again) {
				t.Error("two renderings of the same report differ")
			}
			checkSVG(t, got)
		})
	}
}

// allowedElements and allowedAttributes are what the writer produces: nothing
// that runs, loads, links or styles from elsewhere.
var (
	allowedElements   = map[string]bool{"svg": true, "title": true, "desc": true, "g": true, "clipPath": true, "rect": true, "line": true, "path": true, "text": true}
	allowedAttributes = map[string]bool{
		"xmlns": true, "width": true, "height": true, "viewBox": true, "font-family": true, "font-size": true, "font-weight": true,
		"fill": true, "stroke": true, "stroke-width": true, "stroke-dasharray": true, "stroke-linejoin": true, "stroke-linecap": true,
		"id": true, "clip-path": true, "x": true, "y": true, "x1": true, "y1": true, "x2": true, "y2": true, "rx": true, "d": true, "text-anchor": true, "transform": true,
	}
)

func checkSVG(t *testing.T, doc []byte) {
	t.Helper()
	if !utf8.Valid(doc) {
		t.Error("not UTF-8")
	}
	for i, r := range string(doc) {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || r == 0x202e || r == 0x200b || r == 0xfffe {
			t.Errorf("character %U at byte %d", r, i)
		}
	}
	// Markup can only come from the writer: no comments, CDATA sections,
	// doctypes or processing instructions.
	for _, bad := range []string{"<!", "<?", "]]>"} {
		if strings.Contains(string(doc), bad) {
			t.Errorf("output contains %q", bad)
		}
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	depth, root, texts := 0, "", 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = tok.Name.Local
			}
			depth++
			if !allowedElements[tok.Name.Local] {
				t.Errorf("element %s", tok.Name.Local)
			}
			for _, a := range tok.Attr {
				if !allowedAttributes[a.Name.Local] {
					t.Errorf("attribute %s", a.Name.Local)
				}
				if strings.Contains(strings.ToLower(a.Value), "http") && a.Value != "http://www.w3.org/2000/svg" {
					t.Errorf("attribute %s names a URL: %s", a.Name.Local, a.Value)
				}
				if strings.Contains(a.Value, "url(") && !strings.HasPrefix(a.Value, "url(#title-") {
					t.Errorf("attribute %s refers to %s", a.Name.Local, a.Value)
				}
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			// A title of 60, a legend name of 28 and a variant name of about
			// 70 cells, plus the fixed words around them.
			if n := utf8.RuneCount(tok); n > 400 {
				t.Errorf("text of %d characters: %.80q…", n, tok)
			}
			texts++
		}
	}
	if root != "svg" || depth != 0 {
		t.Errorf("root element %q, depth at the end %d", root, depth)
	}
}

// TestSVGContent checks, beyond the goldens, what each case is about.
func TestSVGContent(t *testing.T) {
	tests := []struct {
		name    string
		report  *simulate.Report
		want    []string
		notWant []string
	}{
		{"headline", threeVariants(), []string{
			"as deployed", "enforcement=preferred,weight=0.3", "down=us-east-1a",
			"routed 2,760 of 2,760 (100%) · failed 0 (0%)", "routed 2,760 of 2,954 (93.4%) · failed 194 (6.6%)", "cross-domain transfers", "KV hit rate 37.5%",
			"virtual time (s)", "load (sequences / requests)", "decode load (active sequences)", "prefill load (requests in flight)",
			">zone:</text>", "no failed requests",
		}, nil},
		{"failures only where they are", twoVariants(), []string{failColour}, nil},
		{"no failures, no red bars", report(threeVariants().Variants[0]), nil, []string{`fill="` + failColour + `"><title>`}},
		{"no buckets", noBuckets(), []string{"no time series (no buckets)"}, []string{"<path"}},
		{"no variants", report(), []string{"No variants to plot."}, []string{"<path"}},
		{"1,000 domains", manyDomains(), []string{"+991 more (the 40 busiest in grey)", "rack-0"}, nil},
		{"a few more domains", func() *simulate.Report {
			r := manyDomains()
			r.Variants[0].Domains = r.Variants[0].Domains[:12]
			return r
		}(), []string{"+3 more (in grey)"}, nil},
		{"hostile", hostile(), []string{
			"&lt;/text&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;", "a&amp;b&lt;c&gt;&quot;d&#39;e", "zone[2Jevil", "bad\ufffd", "雲-東京-1a", "…",
		}, []string{"\x1b", "\u202e"}},
		{"non-finite", nonFinite(), []string{"KV hit rate –"}, []string{"NaN", "Inf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(renderSVG(t, tc.report))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q", w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q", w)
				}
			}
		})
	}
}

// TestSVGColours checks that a domain has the same colour in every panel and
// that the coloured domains of a large report are the busiest.
func TestSVGColours(t *testing.T) {
	c := newChart(threeVariants())
	if want := zones; strings.Join(c.domains, ",") != strings.Join(want, ",") {
		t.Fatalf("domains %v, want %v", c.domains, want)
	}
	for u := range zones {
		if c.colour[u] != palette[u] {
			t.Errorf("domain %s: colour %s, want %s", zones[u], c.colour[u], palette[u])
		}
	}
	doc := string(renderSVG(t, threeVariants()))
	for u, z := range zones {
		// Each variant draws each zone's decode line in the zone's colour.
		if n := strings.Count(doc, `stroke="`+palette[u]+`" stroke-width="2" `); n != 3 {
			t.Errorf("%s: %d decode lines in %s, want 3", z, n, palette[u])
		}
	}

	m := newChart(manyDomains())
	peaks := make([]float64, len(m.domains))
	for d := range peaks {
		peaks[d] = domainPeak(m.r.Variants[0].Series, d)
	}
	var lowestColoured, highestOther float64 = 1e9, -1
	coloured, grey := 0, 0
	for u, col := range m.colour {
		switch col {
		case "":
			highestOther = max(highestOther, peaks[u])
		case otherColour:
			grey++
			highestOther = max(highestOther, peaks[u])
		default:
			coloured++
			lowestColoured = min(lowestColoured, peaks[u])
		}
	}
	if coloured != len(palette) || grey != maxGrey || lowestColoured < highestOther {
		t.Errorf("coloured %d (lowest peak %v), grey %d, others' highest peak %v", coloured, lowestColoured, grey, highestOther)
	}
}

func TestSVGNilReport(t *testing.T) {
	if err := SVG(io.Discard, nil); err == nil {
		t.Error("no error for a nil report")
	}
}

// TestFailuresWithoutADomainAreDrawn (issue 31): failures that have no
// domain are drawn in the failure strips of both charts and counted in their
// totals; the SVG does not say "no failed requests".
func TestFailuresWithoutADomainAreDrawn(t *testing.T) {
	r := noDomainFailures()
	svg := string(renderSVG(t, r))
	if strings.Contains(svg, "no failed requests") {
		t.Errorf("the SVG says there are no failed requests")
	}
	for _, w := range []string{"failed 5 (", "<title>3 failed from 1 s</title>", "<title>2 failed from 4 s</title>"} {
		if !strings.Contains(svg, w) {
			t.Errorf("the SVG lacks %q", w)
		}
	}
	term := renderTerminal(t, r, 80)
	var strip string
	for line := range strings.SplitSeq(term, "\n") {
		if strings.HasPrefix(line, "  failed ") {
			strip = line
		}
	}
	// Six buckets of 1 s, a column each: failures in the second (3 of 20
	// routed + 3) and the fifth (2 of 20 + 2), each under half.
	if cells := strings.Fields(strip); len(cells) != 3 || cells[1] != "·▪··▪·" || cells[2] != "5" {
		t.Errorf("failure strip %q, want failures in columns 2 and 5 and a total of 5", strip)
	}
}
