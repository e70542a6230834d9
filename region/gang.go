package region

// GangMinSlots is the gang a job can ask for so that it starts without
// waiting for slots (YuniKorn's task groups, seed 001): its driver, if
// it has one, plus the slots of every region scheduled at the start (the
// regions that consume no blocking partition). Users need not count by
// hand: a job file's gang minSlots can default to it. Regions that start
// later are not counted: a gang reserves what the job needs to begin, and
// later regions ask as usual.
func (rs *Regions) GangMinSlots(driver bool) int {
	n := 0
	if driver {
		n = 1
	}
	for r := range ID(rs.NumRegions()) {
		if rs.isSource(r) {
			n += rs.SlotCount(r)
		}
	}
	return n
}
