package runs

import "sync"

// stampCache keeps one value per key with the stamp it was computed for
// (say, a run's item counts): while the stamp stands still the value does
// too, so a finished run's page computes it once and a live run's at most
// once per change. It forgets everything when full; entries are cheap to redo.
type stampCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]stamped[V]
}

type stamped[V any] struct {
	stamp string
	v     V
}

const stampCacheSize = 256

// get returns the value cached for k, and whether it was computed for stamp.
func (c *stampCache[K, V]) get(k K, stamp string) (v V, fresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e.v, ok && e.stamp == stamp, ok
}

func (c *stampCache[K, V]) put(k K, stamp string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= stampCacheSize {
		c.m = map[K]stamped[V]{}
	}
	c.m[k] = stamped[V]{stamp: stamp, v: v}
}

// entry returns the value cached for k and the stamp it was computed for.
func (c *stampCache[K, V]) entry(k K) (v V, stamp string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e.v, e.stamp, ok
}
