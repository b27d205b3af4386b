package store

// SetFillPartDone makes fn run at the end of each part of a run's item
// fill, in the part's transaction, so tests can stop or fail a creation
// midway.
func (s *Store) SetFillPartDone(fn func(part int) error) { s.fillPartDoneFunc = fn }

// SetParallelFillFrom makes runs of n items or more fill in parallel on
// PostgreSQL, so tests can see a small run through that path.
func (s *Store) SetParallelFillFrom(n int64) { s.parallelFillFrom = n }
