package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// measureFigureText, appended to a copy of the report, waits for the
// page's fonts and writes into the DOM where every text of every figure
// is drawn, relative to its figure's box, in CSS pixels. The control is a
// text set in Liberation Serif itself, outside any figure: its width
// tells whether the browser has that font.
const measureFigureText = `<script>
document.fonts.ready.then(() => {
  const ns = 'http://www.w3.org/2000/svg';
  const probe = document.createElementNS(ns, 'svg');
  probe.setAttribute('width', '600'); probe.setAttribute('height', '40');
  const control = document.createElementNS(ns, 'text');
  control.setAttribute('x', '0'); control.setAttribute('y', '20');
  control.setAttribute('style', 'font-family:Liberation Serif;font-size:12px');
  control.textContent = 'Number of samples 1000000 (LeNet, d = 21,840)';
  probe.appendChild(control);
  document.body.appendChild(probe);
  const figures = [];
  for (const sec of document.querySelectorAll('section[id^="fig-"]')) {
    for (const svg of sec.querySelectorAll('figure svg')) {
      const box = svg.getBoundingClientRect();
      const texts = [];
      for (const t of svg.querySelectorAll('text')) {
        if (t.textContent.trim() === '') continue;
        const r = t.getBoundingClientRect();
        texts.push({text: t.textContent, x: r.left - box.left, y: r.top - box.top, w: r.width, h: r.height});
      }
      figures.push({id: sec.id.slice(4), w: box.width, h: box.height, texts: texts});
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify({control: control.getComputedTextLength(), figures: figures});
  document.body.appendChild(pre);
});
</script>`

// textBox is where a text is drawn relative to its figure, in CSS pixels.
type textBox struct {
	Text       string
	X, Y, W, H float64
}

type figureText struct {
	Control float64
	Figures []struct {
		ID    string
		W, H  float64
		Texts []textBox
	}
}

// checkFiguresWithoutTheirFont renders the report twice in Chromium, as
// on this machine and with the Liberation fonts hidden from fontconfig
// (a Mac, most Windows machines, a Linux without fonts-liberation), and
// checks that every figure's every text sits inside its figure's box and
// where it sits with the fonts present (issue 43: without the page
// carrying its font, 350 of 350 texts of the paper report moved and 20 ran
// out of their figures).
func checkFiguresWithoutTheirFont(t *testing.T, page []byte, chromium string) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "fonts.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <selectfont><rejectfont><glob>*Liberation*</glob></rejectfont></selectfont>
  <cachedir>%s</cachedir>
</fontconfig>
`, filepath.Join(dir, "cache"))), 0o644); err != nil {
		t.Fatal(err)
	}
	hidden := []string{"FONTCONFIG_FILE=" + conf}
	if out, err := exec.Command("fc-match", "Liberation Serif").Output(); err == nil && !bytes.Contains(out, []byte("Liberation")) {
		t.Fatalf("this machine has no Liberation Serif (fc-match gives %q): the comparison needs it (apt-get install fonts-liberation; .ci/run installs it)", out)
	}
	var with, without figureText
	measure := func(env []string, v *figureText) {
		t.Helper()
		run := chromiumRunner(t, chromium, "", env)
		measureInChromium(t, run, page, measureFigureText, "1024,768", v, "--virtual-time-budget=10000")
	}
	measure(nil, &with)
	measure(hidden, &without)
	if math.Abs(with.Control-without.Control) < 0.5 {
		t.Fatalf("a text set in Liberation Serif is %.2f px wide with the fonts and %.2f px without: hiding them did not work, the check would prove nothing", with.Control, without.Control)
	}
	if len(with.Figures) == 0 || len(with.Figures) != len(without.Figures) {
		t.Fatalf("measured %d figures with the fonts, %d without", len(with.Figures), len(without.Figures))
	}
	moved, out, n := 0, 0, 0
	for i, fw := range with.Figures {
		fo := without.Figures[i]
		if fw.ID != fo.ID || len(fw.Texts) != len(fo.Texts) {
			t.Fatalf("figure %d: %s with %d texts with the fonts, %s with %d without", i, fw.ID, len(fw.Texts), fo.ID, len(fo.Texts))
		}
		for j, a := range fw.Texts {
			b := fo.Texts[j]
			n++
			if d := max(math.Abs(a.X-b.X), math.Abs(a.Y-b.Y), math.Abs(a.W-b.W), math.Abs(a.H-b.H)); d > 0.01 {
				if moved++; moved <= 5 {
					t.Errorf("figure %s: %q at (%.1f, %.1f) %.1f×%.1f px with the fonts, (%.1f, %.1f) %.1f×%.1f without", fw.ID, a.Text, a.X, a.Y, a.W, a.H, b.X, b.Y, b.W, b.H)
				}
			}
			for _, m := range []struct {
				env  string
				r    textBox
				w, h float64
			}{{"with the fonts", a, fw.W, fw.H}, {"without them", b, fo.W, fo.H}} {
				r := m.r
				if r.X < -0.5 || r.Y < -0.5 || r.X+r.W > m.w+0.5 || r.Y+r.H > m.h+0.5 {
					if out++; out <= 5 {
						t.Errorf("figure %s %s: %q spans x %.1f to %.1f, y %.1f to %.1f px, outside its %.1f×%.1f box", fw.ID, m.env, r.Text, r.X, r.X+r.W, r.Y, r.Y+r.H, m.w, m.h)
					}
				}
			}
		}
	}
	if moved+out > 0 {
		t.Errorf("of %d figure texts, %d moved without the Liberation fonts and %d leave their figure", n, moved, out)
		return
	}
	t.Logf("%d texts of %d figures: the same with and without the Liberation fonts, each inside its figure (a Liberation Serif control text: %.1f px with, %.1f px without)", n, len(with.Figures), with.Control, without.Control)
}
