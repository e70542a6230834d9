package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Str returns the value of key (values joined by commas), "" for a key
// without value, or def if the key is absent.
func Str(td *datadriven.TestData, key, def string) string {
	if a, ok := td.Arg(key); ok {
		if len(a.Vals) == 0 {
			return ""
		}
		return strings.Join(a.Vals, ",")
	}
	return def
}

// MustStr returns the value of key, failing the test if it has none.
func MustStr(t *testing.T, td *datadriven.TestData, key string) string {
	a, ok := td.Arg(key)
	if !ok || len(a.Vals) == 0 {
		td.Fatalf(t, "%s: %s= missing", td.Cmd, key)
	}
	return strings.Join(a.Vals, ",")
}

// ParseInt reads s, the value of key, as an int.
func ParseInt(t *testing.T, td *datadriven.TestData, key, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		td.Fatalf(t, "%s=%s: %v", key, s, err)
	}
	return n
}

// Int returns the value of key as an int, failing the test if it is
// absent.
func Int(t *testing.T, td *datadriven.TestData, key string) int {
	var n int
	td.ScanArgs(t, key, &n)
	return n
}

// ParseDur reads s, the value of key: "500ms", "1s" or a bare number of
// milliseconds.
func ParseDur(t *testing.T, td *datadriven.TestData, key, s string) time.Duration {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Millisecond
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%s=%s: %v", key, s, err)
	}
	return d
}

// Ms renders a virtual time or duration in milliseconds: "1500ms".
func Ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// Plural renders n and the noun, plural unless n is 1: "2 slots".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Result renders an input's answer: "ok" or "error: ...".
func Result(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

// Lines renders one item a line, "ok" for none.
func Lines(out []string) string {
	if len(out) == 0 {
		return "ok"
	}
	return strings.Join(out, "\n")
}
