package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"tribunal/store"
)

const agentsUsage = `Usage: tribunal agents [--json]

Lists the saved agents: id, name, latest version, executor (tools: Tribunal's
tool loop on a provider's model; http: your own agent behind a URL), model
and MCP servers. A run file names one with a target "- agent: NAME".
`

// agentRow is one agent as tribunal agents prints it.
type agentRow struct {
	ID       int64               `json:"id"`
	Name     string              `json:"name"`
	Version  int                 `json:"version"`
	Executor store.AgentExecutor `json:"executor"`
	// Model is "provider / model" for the tools executor, the URL for http.
	Model   string   `json:"model"`
	Servers []string `json:"mcp_servers"`
}

func (e *env) agents(args []string) error {
	fs := newFlagSet("agents", agentsUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		fs.Usage()
		return usageErr("tribunal agents takes no arguments")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := e.openStore(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	agents, err := st.Agents(ctx)
	if err != nil {
		return failErr("%v", err)
	}
	providers, err := st.Providers(ctx)
	if err != nil {
		return failErr("%v", err)
	}
	providerName := map[int64]string{}
	for _, p := range providers {
		providerName[p.ID] = p.Name
	}
	rows := make([]agentRow, len(agents))
	for i, a := range agents {
		r := agentRow{ID: a.ID, Name: a.Name, Version: a.Version, Executor: a.Executor, Servers: []string{}}
		switch {
		case a.HTTP != nil:
			r.Model = a.HTTP.URL
		case a.ProviderID != nil:
			r.Model = providerName[*a.ProviderID] + " / " + a.Model
		}
		for _, s := range a.MCPServers {
			r.Servers = append(r.Servers, s.Name)
		}
		rows[i] = r
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tVERSION\tEXECUTOR\tMODEL\tMCP SERVERS")
	for _, r := range rows {
		servers := strings.Join(r.Servers, ", ")
		if servers == "" {
			servers = "–"
		}
		fmt.Fprintf(tw, "%d\t%s\tv%s\t%s\t%s\t%s\n", r.ID, r.Name, strconv.Itoa(r.Version), r.Executor, r.Model, servers)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, plural(len(rows), "agent"))
	return nil
}
