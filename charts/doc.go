// Package charts renders small, self-contained inline SVG charts on the
// server: no JavaScript, no external fonts, stylesheets or images, so the
// markup works both on Tribunal's pages and in a single-file HTML report
// opened from disk.
//
// Every chart function returns the complete <svg> element as template.HTML.
// That is safe to insert verbatim (html/template, or templ via
// templ.Raw(svg)) because every caller-provided string — titles, labels,
// formatted numbers — is sanitised and escaped inside the package.
//
// Look and feel:
//
//   - The SVG has a viewBox and its natural Width and Height; the page's
//     stylesheet scales it down to a narrower container (.tb-chart
//     {max-width: 100%; height: auto}, in assets/app.css and the reports'
//     head), never up, so text is never blown up on wide screens. There is
//     no style attribute: Tribunal's pages refuse inline styles.
//   - Text, axes and grid lines use currentColor (with opacity), so they
//     follow the surrounding page's text colour in light and dark themes.
//     Data marks use mid-tone colours that read on both white and near-black
//     backgrounds; heat-map cells carry their own contrasting text colour.
//   - All other styling is presentation attributes; elements also carry
//     tb-* classes so a page stylesheet can override them.
//   - Output has no id attributes (several charts can share a page) and is
//     deterministic: the same input always yields the same bytes.
//
// Accessibility: each SVG has role="img", an aria-label, a <title> and a
// <desc> summarising the data in words; marks carry <title> tooltips with
// the full label and exact numbers (long labels are truncated on screen with
// an ellipsis).
//
// Robustness: NaN and ±Inf values are skipped, empty input renders a small
// "No data" SVG, and large inputs are aggregated (Distribution draws
// histograms and box plots, never one element per value).
package charts
