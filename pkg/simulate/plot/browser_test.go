package plot

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// EnvChromium names the chromium binary the rendering test runs; without it
// the test looks for the one hack/chromium/provision.sh recorded in the cache
// (KDYN_CACHE/chromium/chromium), then /usr/bin/chromium.
const EnvChromium = "KDYN_CHROMIUM"

func chromium() string {
	if p := os.Getenv(EnvChromium); p != "" {
		return p
	}
	for _, p := range []string{filepath.Join(hermetic.CacheDir(), "chromium", "chromium"), "/usr/bin/chromium"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// TestSVGRendersInChromium opens the SVG of two variants, the second with
// failures, in headless chromium and looks at the screenshot: the panels'
// background where the layout puts the plots, each zone's line colour inside
// the plot of each panel, red failure bars in the second panel's strip and no
// red anywhere in the first panel.
func TestSVGRendersInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		hermetic.SkipOrFail(t, "chromium (to render the SVG)", "hack/chromium/provision.sh")
	}
	r := twoVariants()
	dir := t.TempDir()
	svgPath := filepath.Join(dir, "simulate.svg")
	pngPath := filepath.Join(dir, "simulate.png")
	var doc bytes.Buffer
	if err := SVG(&doc, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(svgPath, doc.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const width, height = 1200, 900
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+pngPath,
		"--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height),
		"file://"+filepath.ToSlash(svgPath))
	// Chromium's helper processes may keep the output open after it exits.
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode the screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < width || b.Dy() < height {
		t.Fatalf("screenshot is %v, want %dx%d", b, width, height)
	}

	lay := newChart(r).lay
	if len(lay.panels) != 2 {
		t.Fatalf("%d panels", len(lay.panels))
	}
	bg := hexColour(plotBG)
	red := hexColour(failColour)
	// Lines are 2 px wide, so a line at the axis' bottom is half outside.
	grow := func(r rect) image.Rectangle {
		return image.Rect(int(r.x)-3, int(r.y)-3, int(r.x+r.w)+3, int(r.y+r.h)+3)
	}
	for i, p := range lay.panels {
		plot := grow(p.plot)
		if n, all := countNear(img, plot, bg, 4), plot.Dx()*plot.Dy(); n < all/3 {
			t.Errorf("panel %d: %d of %d plot pixels are the plot background %s", i, n, all, plotBG)
		}
		for z := range zones {
			if n := countNear(img, plot, hexColour(palette[z]), 24); n < 20 {
				t.Errorf("panel %d: %d pixels of %s's colour %s in the plot", i, n, zones[z], palette[z])
			}
		}
	}
	if n := countNear(img, grow(lay.panels[1].strip), red, 24); n < 200 {
		t.Errorf("panel 1 (failures): %d red pixels in the failures strip, want bars", n)
	}
	if n := countNear(img, grow(lay.panels[0].card), red, 60); n != 0 {
		t.Errorf("panel 0 (no failures): %d red pixels", n)
	}
	// The title: dark text at the top.
	if n := countNear(img, image.Rect(margin, 10, 500, 36), hexColour(textColour), 40); n < 100 {
		t.Errorf("title: %d dark pixels", n)
	}
}

// rgb is a colour as 8-bit channels.
type rgb struct{ r, g, b int }

func hexColour(s string) rgb {
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		panic(s)
	}
	return rgb{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
}

// countNear counts the pixels of area within tol of c on every channel.
func countNear(img image.Image, area image.Rectangle, c rgb, tol int) int {
	area = area.Intersect(img.Bounds())
	n := 0
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-c.r) <= tol && abs(int(g>>8)-c.g) <= tol && abs(int(b>>8)-c.b) <= tol {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
