// Package plot turns per-seed learning curves into the paper's figures:
// it aggregates seeds into a mean and a shaded band (Aggregate), writes the
// numbers behind a figure (CurvesCSV, SeedsCSV), and renders the figure as
// PNG and SVG with gonum/plot (Render).
//
// # Bands
//
// As in the authors' code (spec §1, §6 item 19):
//
//   - BandMinMaxStd, for the one-step plots (MNIST, linear regression):
//     mean ± population std (ddof 0), clipped elementwise to [min, max]
//     across seeds.
//   - BandStdErr, for the multi-step plots (MuJoCo, LQR): mean ±
//     population std / √n.
//
// AggregateOptions.LoFloor intersects the band with [floor, +Inf) (the LQR
// plot uses 0). Every figure's caption must say which band it shows;
// Band.Caption gives the wording.
//
// # Figure layout
//
// Panels are tiled left to right. Under them one legend for the whole
// figure (entries in Spec.Curves order, wrapped into centred rows) and then
// the caption, word-wrapped to the figure width. The legend sits outside
// the panels so that it never covers a curve. Each curve is a band (a
// filled polygon in the curve's colour at a quarter of its opacity) under
// its mean line; all bands of a panel are drawn before all lines. Axis
// ranges default to the drawn data (lines and bands) padded by 4% of the
// span on each side (in log space on a log axis); PanelSpec limits
// override either end. An optional inset (Spec.Inset) redraws a panel's
// curves with fixed limits over a white background (Fig. 3a/3b: H = 1..5,
// y in [0, 2]) in the corner of its data area that hides the least of the
// panel's lines and bands (upper left, as in the paper, unless another
// corner hides less).
//
// # Log axes and values that cannot be drawn
//
// A log axis has base-10 ticks: labelled decades (10^k) with minor ticks at
// 2..9 x 10^k; 2 x 10^k and 5 x 10^k are labelled too when fewer than two
// decades are in range, and where even that labels fewer than three ticks,
// the ticks are linear ones (0.04, 0.06, ...) on the log scale. The rules
// for points:
//
//   - A grid point whose x is non-finite, or non-positive on a log-x axis,
//     is dropped from the line and the band.
//   - A mean that is non-finite, or non-positive on a log-y axis, is
//     dropped from the line. A dropped point splits the line; an isolated
//     remaining point is drawn as a dot.
//   - A band point is dropped when Lo or Hi is non-finite, or when Hi is
//     non-positive on a log-y axis. On a log-y axis a non-positive Lo is
//     raised to the smallest positive finite Mean, Lo or Hi of the panel.
//     A dropped point splits the band; a band piece needs two points.
//   - A non-positive explicit limit on a log axis is ignored (spec §3.9
//     says "log x, limited to [0, 3e5]": the 0 falls back to the data).
//
// The same rules apply in an inset. CSV files always hold every value.
//
// # Determinism
//
// Render and the CSV writers are pure functions of their arguments: no map
// iteration reaches any output order, no clock, no randomness. Aggregate
// accumulates in seed input order and forbids fused multiply-adds, so its
// numbers are the same on every GOARCH. Rendering goes through gonum/plot,
// its vendored Liberation fonts, vgimg (PNG at PNGDPI dots per inch) and
// vgsvg (fonts referenced by name, not embedded), which are deterministic
// for a given GOARCH; the rasteriser's floating point may differ between
// architectures, so golden images are checked on the GOARCH that made them.
// Render is safe for concurrent use.
//
// # Text
//
// Every text of a figure is plain Unicode (a caption's "2·10⁴" is the
// string the report and claims.json quote too); its superscript digits
// and signs are drawn as the font's own digits at 0.7 of the size, raised
// (supText), because the Liberation fonts lack ⁰ and ⁹ and draw ⁶…⁸ with
// other metrics than ⁴ and ⁵. In an SVG such an exponent is a text element
// of its own after the text before it.
package plot
