package topology

import "strings"

// QueueNameRule says what a full queue name is, for error messages.
const QueueNameRule = `a queue name is "root" or "root." followed by dot-separated non-empty parts, e.g. "root.default" or "root.prod.etl"`

// ValidQueueName reports whether name is a full queue name: "root", or
// "root." followed by dot-separated parts that are neither empty nor
// surrounded by whitespace ("root.prod.etl" is a child of "root.prod").
// The admission refuses every other name; a job file's queue is checked
// against the same rule when the file is read.
func ValidQueueName(name string) bool {
	rest, ok := strings.CutPrefix(name, "root")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	rest, ok = strings.CutPrefix(rest, ".")
	if !ok {
		return false // "rooted" is not under "root"
	}
	for part := range strings.SplitSeq(rest, ".") {
		if part == "" || strings.TrimSpace(part) != part {
			return false
		}
	}
	return true
}
