package timeline

import "github.com/regionsched/regionsched/runfile"

// Speculative execution in a picture: a speculative attempt's bar is
// outlined in purple, dashed; the attempt that won its task's race gets a
// gold star at its finish, on its slot's row. The aggregated view of a
// large run draws neither.

// speculativeStroke is the outline of a speculative attempt's bar.
const speculativeStroke = "#6a3d9a"

// speculativeWord is "speculative " for a speculative attempt's title.
func speculativeWord(yes bool) string {
	if yes {
		return "speculative "
	}
	return ""
}

// winMarks draws a star at every Win of the trace (rowTop: the top of
// each slot's row).
func (p *picture) winMarks(rowTop []float64) {
	if p.timeW <= 0 {
		return
	}
	for _, e := range p.tl.Events {
		if e.Kind != runfile.Win || e.Slot < 0 || e.Slot >= p.tl.Slots || e.Slot >= len(rowTop) {
			continue
		}
		x, y := p.x(e.At), rowTop[e.Slot]+2
		p.printf(`<g class="win"><title>%s attempt %d won: its finish came first, the task's other attempts were canceled</title>`,
			xmlText(qualified(e.Job, e.Task)), e.Attempt)
		p.printf(`<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle" fill="#d4a017" stroke="#5c4400" stroke-width="0.4">★</text></g>`+"\n", x, y+9)
	}
}

// speculationLegend explains the marks of speculative execution, if the
// picture has any.
func (p *picture) speculationLegend(bars []span) []legendEntry {
	var out []legendEntry
	for _, b := range bars {
		if b.speculative {
			out = append(out, legendEntry{fill: "#ffffff", stroke: speculativeStroke, label: "speculative attempt (dashed purple outline)"})
			break
		}
	}
	for _, e := range p.tl.Events {
		if e.Kind == runfile.Win {
			out = append(out, legendEntry{fill: "#d4a017", stroke: "#5c4400", label: "★ the attempt that finished first among its task's attempts"})
			break
		}
	}
	return out
}
