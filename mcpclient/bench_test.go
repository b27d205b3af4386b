package mcpclient_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/mcpclient"
)

// BenchmarkCall runs 1,000 tool calls, 16 at a time, against an in-process
// server over streamable HTTP whose tool answers at once: what is measured
// is the client, the SDK and the loopback HTTP between them.
func BenchmarkCall(b *testing.B) {
	const calls, concurrency = 1000, 16
	c, err := mcpclient.Dial(context.Background(), []mcpclient.Server{
		{Name: "bench", URL: serveStreamable(b, newToolbox()), Concurrency: concurrency},
	}, mcpclient.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	args := json.RawMessage(`{"a": 1, "b": 2}`)

	var total time.Duration
	for b.Loop() {
		start := time.Now()
		var next atomic.Int32
		var wg sync.WaitGroup
		for range concurrency {
			wg.Go(func() {
				for next.Add(1) <= calls {
					res, err := c.Call(context.Background(), "add", args)
					if err != nil || res.IsError {
						b.Errorf("add: %+v, %v", res, err)
						return
					}
				}
			})
		}
		wg.Wait()
		total += time.Since(start)
	}
	n := float64(b.N * calls)
	b.ReportMetric(n/total.Seconds(), "calls/s")
	b.ReportMetric(float64(total.Microseconds())/n, "µs/call")
}
