package region

// GangMinSlots is the gang a job can ask for so that it starts without
// waiting for slots (YuniKorn's task groups): its driver, if
// it has one, plus the slots of every region scheduled at the start (the
// regions that consume no blocking partition), capped at queueSlots, the
// most slots the job's queue can ever hold (the cluster's, until queues
// have capacities; 0 or less: no cap). Users need not count by hand: a
// job file's gang minSlots can default to it. Regions that start later
// are not counted: a gang reserves what the job needs to begin, and later
// regions ask as usual. The cap keeps a default from rejecting a job that
// runs region by region: a gang the queue cannot hold reserves what it
// can, and the regions it does not cover ask as usual.
func (rs *Regions) GangMinSlots(driver bool, queueSlots int) int {
	n := 0
	if driver {
		n = 1
	}
	for r := range ID(rs.NumRegions()) {
		if rs.isSource(r) {
			n += rs.SlotCount(r)
		}
	}
	if queueSlots > 0 {
		n = min(n, queueSlots)
	}
	return n
}
