package mcpclient

import (
	"context"
	"strings"
	"sync"
)

// ServerStatus is one server's line in POST /api/agents/{id}/test.
type ServerStatus struct {
	Name  string     `json:"name"`
	OK    bool       `json:"ok"`
	Tools []ToolInfo `json:"tools"`
	Error string     `json:"error,omitempty"`
}

// ToolInfo is a tool as the test of an agent lists it.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Test connects to each server at once, lists its tools (the allowed ones)
// and disconnects. It never fails as a whole: each server gets its line, in
// the order given, with what went wrong in Error — including everything
// Dial would refuse (a missing or repeated name, a tool name two servers
// share), so a config that tests OK dials.
func Test(ctx context.Context, servers []Server, opts Options) []ServerStatus {
	opts = opts.withDefaults()
	out := make([]ServerStatus, len(servers))
	toolsOf := make([][]Tool, len(servers))
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for i, s := range servers {
		out[i] = ServerStatus{Name: s.Name, Tools: []ToolInfo{}}
		name := strings.TrimSpace(s.Name)
		switch {
		case name == "":
			out[i].Error = "the server has no name"
			continue
		case seen[name]:
			out[i].Error = "another server has this name"
			continue
		}
		seen[name] = true
		wg.Go(func() {
			sess, err := open(ctx, s, opts)
			if err != nil {
				out[i].Error = err.Error()
				return
			}
			toolsOf[i] = sess.tools
			sess.cs.Close()
			sess.cancel()
		})
	}
	wg.Wait()

	owner := map[string]string{}
	for i := range servers {
		if out[i].Error != "" {
			continue
		}
		out[i].OK = true
		for _, t := range toolsOf[i] {
			out[i].Tools = append(out[i].Tools, ToolInfo{Name: t.Name, Description: t.Description})
			if other, ok := owner[t.Name]; !ok {
				owner[t.Name] = servers[i].Name
			} else if out[i].OK {
				out[i].OK, out[i].Error = false, clash(t.Name, other)
			}
		}
	}
	return out
}
