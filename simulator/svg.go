package simulator

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Timeline is what WriteSVG draws: one row per slot, one bar per task
// attempt from its deploy to its finish, failure or cancellation.
type Timeline struct {
	Title    string
	Subtitle string
	Slots    int
	Regions  int
	Makespan time.Duration
	Events   []Event
}

// maxBars bounds the picture; a bigger run draws its first bars and says
// how many it left out.
const maxBars = 50_000

// bar is one task attempt in one slot.
type bar struct {
	task         string
	region, slot int
	attempt      int
	start, end   time.Duration
	outcome      Kind // Finish, Fail, Cancel, or Deploy if still running at the end
	lane         int
}

// WriteSVG renders the timeline as a standalone SVG picture: slots on the
// vertical axis, virtual time on the horizontal one, bars coloured by
// region with a legend, failed attempts outlined in red and canceled ones
// faded with a dashed outline; attempts still holding a slot at the end
// (a deadlock) run to the right edge with a hatched end.
func WriteSVG(w io.Writer, tl Timeline) error {
	// a row for every slot the events name, even if tl.Slots is too small
	for _, e := range tl.Events {
		if e.Slot >= tl.Slots {
			tl.Slots = e.Slot + 1
		}
	}
	bars, omitted := collectBars(tl)
	lanes := assignLanes(bars, tl.Slots)

	const (
		width     = 1200.0
		left      = 90.0
		right     = 30.0
		top       = 84.0
		laneH     = 22.0
		rowGap    = 6.0
		axisH     = 40.0
		legendRow = 20.0
	)
	plotW := width - left - right
	span := tl.Makespan
	open := 0
	for i := range bars {
		if bars[i].outcome == Deploy {
			open++
		}
	}
	if open > 0 {
		// Tasks still hold their slots at the end (a deadlock, or
		// unbounded tasks): draw them on past the last event, so the
		// picture shows them waiting.
		span += max(span/5, time.Second)
		for i := range bars {
			if bars[i].outcome == Deploy {
				bars[i].end = span
			}
		}
	}
	if span <= 0 {
		span = time.Millisecond
	}
	x := func(t time.Duration) float64 { return left + plotW*float64(t)/float64(span) }

	rowTop := make([]float64, tl.Slots+1)
	y := top
	for s := 0; s < tl.Slots; s++ {
		rowTop[s] = y
		y += float64(max(1, lanes[s]))*laneH + rowGap
	}
	rowTop[tl.Slots] = y
	plotBottom := y
	legendEntries, legendNote := legend(tl.Regions)
	perLine := 10
	legendLines := (len(legendEntries) + perLine - 1) / perLine
	height := plotBottom + axisH + float64(legendLines)*legendRow + 40

	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">`+"\n", width, height, width, height)
	p(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#000" fill-opacity="0.35"/></pattern></defs>` + "\n")
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	p(`<text x="%.0f" y="28" font-size="18" font-weight="bold">%s</text>`+"\n", left, xmlText(tl.Title))
	p(`<text x="%.0f" y="50" font-size="13" fill="#444">%s</text>`+"\n", left, xmlText(tl.Subtitle))

	// rows and slot labels
	for s := 0; s < tl.Slots; s++ {
		fill := "#f4f4f6"
		if s%2 == 1 {
			fill = "#eaeaef"
		}
		p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", left, rowTop[s], plotW, rowTop[s+1]-rowTop[s]-rowGap, fill)
		p(`<text x="%.1f" y="%.1f" font-size="12" text-anchor="end" dominant-baseline="middle">slot %d</text>`+"\n",
			left-8, (rowTop[s]+rowTop[s+1]-rowGap)/2, s)
	}
	// time axis with round ticks
	step := niceStep(span, 10)
	p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, plotBottom, left+plotW, plotBottom)
	for t := time.Duration(0); t <= span; t += step {
		xt := x(t)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ccc" stroke-dasharray="2,3"/>`+"\n", xt, top-4, xt, plotBottom)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", xt, plotBottom, xt, plotBottom+5)
		p(`<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`+"\n", xt, plotBottom+18, formatTick(t, step))
	}
	p(`<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle" fill="#444">virtual time</text>`+"\n", left+plotW/2, plotBottom+34)

	if open > 0 { // where the run stopped with tasks still holding slots
		xe := x(tl.Makespan)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6,3"/>`+"\n", xe, top-8, xe, plotBottom)
		p(`<text x="%.1f" y="%.1f" font-size="11" fill="#d62728" text-anchor="end">nothing progresses after %s</text>`+"\n", xe-4, top-10, formatMillis(tl.Makespan))
	}

	// bars
	for _, b := range bars {
		y0 := rowTop[b.slot] + float64(b.lane)*laneH + 2
		x0, x1 := x(b.start), x(b.end)
		wd := math.Max(x1-x0, 1.5)
		stroke, dash, opacity := "#333", "", 0.9
		switch b.outcome {
		case Fail:
			stroke = "#d62728"
		case Cancel:
			dash, opacity = ` stroke-dasharray="3,2"`, 0.4
		}
		p(`<g><title>%s (region %d, attempt %d) slot %d: %s - %s, %s</title>`, xmlText(b.task), b.region, b.attempt, b.slot,
			formatMillis(b.start), formatMillis(b.end), outcomeName(b.outcome))
		p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s" fill-opacity="%.2f" stroke="%s" stroke-width="%s"%s/>`,
			x0, y0, wd, laneH-4, regionColor(b.region), opacity, stroke, strokeWidth(b.outcome), dash)
		if b.outcome == Deploy { // still holding its slot at the end
			p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#hatch)"/>`, math.Max(x0, x1-24), y0, math.Min(24, wd), laneH-4)
		}
		label := b.task
		if b.outcome == Fail {
			label += " ✗"
		}
		if float64(len(label))*6.5+6 < wd {
			p(`<text x="%.1f" y="%.1f" font-size="11" dominant-baseline="middle" fill="%s">%s</text>`,
				x0+4, y0+(laneH-4)/2, textColor(b.region), xmlText(label))
		}
		p("</g>\n")
	}

	// legend
	ly := plotBottom + axisH + 14
	for i, r := range legendEntries {
		lx := left + float64(i%perLine)*100
		yy := ly + float64(i/perLine)*legendRow
		p(`<rect x="%.1f" y="%.1f" width="14" height="14" rx="2" fill="%s" stroke="#333"/>`, lx, yy-11, regionColor(r))
		p(`<text x="%.1f" y="%.1f" font-size="12">region %d</text>`+"\n", lx+20, yy, r)
	}
	notes := legendNote
	if omitted > 0 {
		notes += fmt.Sprintf(" %d more task attempts not drawn.", omitted)
	}
	p(`<text x="%.1f" y="%.1f" font-size="11" fill="#555">%s red outline: failed; faded dashed: canceled; hatched end: still holding its slot at the end.</text>`+"\n",
		left, ly+float64(legendLines)*legendRow+4, xmlText(notes))
	p("</svg>\n")
	return bw.Flush()
}

// collectBars pairs each deploy with the event that ended the attempt.
func collectBars(tl Timeline) ([]bar, int) {
	type key struct {
		task    string
		attempt int
	}
	open := map[key]int{}
	var bars []bar
	omitted := 0
	for _, e := range tl.Events {
		k := key{e.Task, e.Attempt}
		switch e.Kind {
		case Deploy:
			if len(bars) >= maxBars {
				omitted++
				continue
			}
			open[k] = len(bars)
			bars = append(bars, bar{task: e.Task, region: e.Region, slot: e.Slot, attempt: e.Attempt, start: e.At, end: tl.Makespan, outcome: Deploy})
		case Finish, Fail, Cancel:
			if i, ok := open[k]; ok {
				bars[i].end, bars[i].outcome = e.At, e.Kind
				delete(open, k)
			}
		}
	}
	return bars, omitted
}

// assignLanes stacks overlapping bars of one slot (slot sharing) in lanes
// and returns the number of lanes per slot.
func assignLanes(bars []bar, slots int) []int {
	order := make([]int, len(bars))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return bars[order[a]].start < bars[order[b]].start })
	laneEnds := make([][]time.Duration, slots)
	for _, i := range order {
		b := &bars[i]
		if b.slot < 0 || b.slot >= slots {
			continue
		}
		ends := laneEnds[b.slot]
		lane := -1
		for l, end := range ends {
			if end <= b.start {
				lane = l
				break
			}
		}
		if lane < 0 {
			lane = len(ends)
			ends = append(ends, 0)
		}
		ends[lane] = b.end
		laneEnds[b.slot] = ends
		b.lane = lane
	}
	out := make([]int, slots)
	for s := range out {
		out[s] = len(laneEnds[s])
	}
	return out
}

func legend(regions int) ([]int, string) {
	const limit = 30
	n := min(regions, limit)
	entries := make([]int, n)
	for i := range entries {
		entries[i] = i
	}
	if regions > limit {
		return entries, fmt.Sprintf("Colours repeat every %d regions; %d regions in all.", len(palette), regions)
	}
	return entries, ""
}

// palette is a qualitative colour set (Tableau 10 plus two), cycled by region.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#8cd17d", "#86bcb6"}

func regionColor(r int) string { return palette[((r%len(palette))+len(palette))%len(palette)] }

func textColor(r int) string {
	switch regionColor(r) {
	case "#edc948", "#bab0ac", "#8cd17d", "#86bcb6", "#ff9da7", "#76b7b2":
		return "#111"
	}
	return "#fff"
}

func strokeWidth(k Kind) string {
	if k == Fail {
		return "2.5"
	}
	return "0.8"
}

func outcomeName(k Kind) string {
	switch k {
	case Finish:
		return "finished"
	case Fail:
		return "failed"
	case Cancel:
		return "canceled"
	}
	return "still running at the end"
}

// niceStep picks a tick step of 1, 2 or 5 times a power of ten
// milliseconds giving at most about n ticks.
func niceStep(span time.Duration, n int) time.Duration {
	raw := float64(span.Milliseconds()) / float64(n)
	if raw < 1 {
		return time.Millisecond
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return time.Duration(m*pow) * time.Millisecond
		}
	}
	return time.Duration(10*pow) * time.Millisecond
}

func formatTick(t, step time.Duration) string {
	if step >= time.Second && step%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(t/time.Second))
	}
	if step >= 100*time.Millisecond {
		return fmt.Sprintf("%.1fs", t.Seconds())
	}
	return fmt.Sprintf("%dms", t.Milliseconds())
}

func formatMillis(t time.Duration) string { return fmt.Sprintf("%d ms", t.Milliseconds()) }

// xmlText escapes s for the text of an SVG element or an attribute value:
// markup characters become entities and every character XML 1.0 does not
// allow at all, escaped or not (control characters other than tab,
// newline and carriage return, U+FFFE, U+FFFF, and bytes that are not
// valid UTF-8), becomes U+FFFD. Every piece of text WriteSVG writes that
// comes from outside (titles, task names) goes through here.
func xmlText(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !isXMLChar(r) }) >= 0 || !utf8.ValidString(s) {
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s { // invalid UTF-8 arrives as utf8.RuneError
			if !isXMLChar(r) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	return html.EscapeString(s)
}

// isXMLChar reports whether r matches the Char production of XML 1.0.
func isXMLChar(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20:
		return false
	case r <= 0xD7FF:
		return true
	case r < 0xE000: // surrogates
		return false
	case r <= 0xFFFD:
		return true
	}
	return r >= 0x10000 && r <= utf8.MaxRune
}
