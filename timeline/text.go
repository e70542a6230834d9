package timeline

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/regionsched/regionsched/internal/plural"
)

// textWidth estimates the width in pixels of s drawn at the given font
// size. The estimate follows DejaVu Sans, what "Helvetica, Arial,
// sans-serif" resolves to on Linux and the wider of the common choices,
// so a label that fits by this estimate is not clipped where the picture
// is rendered.
func textWidth(s string, size float64, bold bool) float64 {
	em := 0.0
	for _, r := range s {
		em += runeEm(r)
	}
	if bold {
		em *= 1.1
	}
	return em * size
}

// runeEm is the advance of r in ems (rounded up from DejaVu Sans).
func runeEm(r rune) float64 {
	switch {
	case strings.ContainsRune(" .,:;!|'ijl", r):
		return 0.33
	case strings.ContainsRune("frtI()[]{}/-\"", r):
		return 0.43
	case strings.ContainsRune("mwMW#%@&", r):
		return 0.98
	case r >= 'A' && r <= 'Z':
		return 0.76
	case r >= '0' && r <= '9':
		return 0.64
	case r < 0x80:
		return 0.63
	}
	return 1.0 // dashes, symbols, other scripts
}

// wrapText breaks s at spaces into lines no wider than maxW, less a tenth
// for the error of the estimate; a word wider than a line on its own is
// cut with an ellipsis. It never returns an empty slice for a non-empty s.
func wrapText(s string, size float64, bold bool, maxW float64) []string {
	if s == "" {
		return nil
	}
	maxW *= 0.9
	var lines []string
	line := ""
	for _, word := range strings.Split(s, " ") {
		switch {
		case line == "":
			line = word
		case textWidth(line+" "+word, size, bold) <= maxW:
			line += " " + word
		default:
			lines = append(lines, fitText(line, size, bold, maxW))
			line = word
		}
	}
	return append(lines, fitText(line, size, bold, maxW))
}

// fitText shortens s with a trailing ellipsis until it fits maxW.
func fitText(s string, size float64, bold bool, maxW float64) string {
	if textWidth(s, size, bold) <= maxW {
		return s
	}
	w := textWidth("…", size, bold)
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if w+runeEm(r)*size*boldFactor(bold) > maxW {
			break
		}
		w += runeEm(r) * size * boldFactor(bold)
		out = append(out, r)
	}
	return string(out) + "…"
}

func boldFactor(bold bool) float64 {
	if bold {
		return 1.1
	}
	return 1
}

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

// count renders "1 job" or "3 jobs"; allOf "all 3 jobs" or "the only
// job"; verb picks the singular or plural form for a count.
var (
	count = plural.Count
	allOf = plural.All
	verb  = plural.Of
)
