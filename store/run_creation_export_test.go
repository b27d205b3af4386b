package store

// SetFillPartDone makes fn run at the end of each part of a run's item
// fill, in the part's transaction, so tests can stop or fail a creation
// midway.
func (s *Store) SetFillPartDone(fn func(part int) error) { s.fillPartDoneFunc = fn }
