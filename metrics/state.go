package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"tribunal/store"
)

// stateCollector reads runs and items by status from the database at each
// scrape, so every process reports the same numbers (the engine may run
// elsewhere) and nothing has to be kept in step.
type stateCollector struct {
	st    *store.Store
	runs  *prometheus.Desc
	items *prometheus.Desc
}

func newStateCollector(st *store.Store) *stateCollector {
	return &stateCollector{st: st,
		runs:  prometheus.NewDesc("tribunal_runs", "Runs by status.", []string{"status"}, nil),
		items: prometheus.NewDesc("tribunal_items", "Items of active runs (pending, running or paused) by status.", []string{"status"}, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.runs
	ch <- c.items
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	runs, err := c.st.RunCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.runs, err)
	}
	for status, n := range runs {
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(n), string(status))
	}
	items, err := c.st.ActiveItemCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.items, err)
	}
	for status, n := range items {
		ch <- prometheus.MustNewConstMetric(c.items, prometheus.GaugeValue, float64(n), string(status))
	}
}
