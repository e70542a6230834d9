package admission

import "fmt"

// eventKindNames are the names EventKind.String gives, by kind.
var eventKindNames = [...]string{
	StateChanged:         "state-changed",
	DriverGranted:        "driver-granted",
	PlaceholdersReleased: "placeholders-released",
	PlaceholderMismatch:  "placeholder-mismatch",
	Reclaimed:            "reclaimed",
	ReclaimWithdrawn:     "reclaim-withdrawn",
	SpeculativeGranted:   "speculative-granted",
	PriorityChanged:      "priority-changed",
}

// String names the kind as the trace and the logs do: "reclaimed",
// "driver-granted", ...; an unknown kind prints as EventKind(n).
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}
