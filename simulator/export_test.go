package simulator

// Storage is what a run leaves to the next (storage), for tests that run
// on storage they hold.
type Storage = storage

// RunWith is Run on the storage st.
func RunWith(cfg Config, st *Storage) (*Result, error) { return runWith(cfg, st) }

// RunJobsWith is RunJobs on the storage st.
func RunJobsWith(cfg JobsConfig, st *Storage) (*Result, []JobResult, error) {
	return runJobsWith(cfg, st)
}

// Schedulers returns the number of schedulers st holds.
func (st *storage) Schedulers() int { return len(st.scheds) }

// Tasks returns the capacity of st's task table.
func (st *storage) Tasks() int { return cap(st.tasks) }

// Served returns the most tasks of a job any scheduler st holds ran.
func (st *storage) Served() int {
	most := 0
	for _, s := range st.scheds {
		most = max(most, st.served[s])
	}
	return most
}
