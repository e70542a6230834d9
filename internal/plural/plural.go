// Package plural writes counts of things in English, so that every
// message the library and the command print agrees with its numbers:
// "1 slot", "3 slots", "1 execution vertex", "the only job", "all 4 jobs".
package plural

import "strconv"

// Count renders n and noun, with an s for any n but 1: "1 slot", "0
// slots", "3 slots".
func Count(n int, noun string) string {
	return CountOf(n, noun, noun+"s")
}

// CountOf is Count for a noun whose plural is not made with an s: "1
// execution vertex", "12 execution vertices".
func CountOf(n int, singular, plural string) string {
	return strconv.Itoa(n) + " " + Of(n, singular, plural)
}

// Of picks the form for n things, without the number: Of(1, "holds",
// "hold") is "holds", Of(2, "region", "regions") is "regions".
func Of(n int, singular, plural string) string {
	if n == 1 {
		return singular
	}
	return plural
}

// All renders "all 3 jobs", or "the only job" for one (and "all 0 jobs"
// for none).
func All(n int, noun string) string {
	if n == 1 {
		return "the only " + noun
	}
	return "all " + Count(n, noun)
}
