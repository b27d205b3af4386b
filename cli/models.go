package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"tribunal/engine"
	"tribunal/format"
	"tribunal/runfile"
	"tribunal/store"
)

const modelsUsage = `Usage: tribunal models PROVIDER [--file RUN.yaml]

Lists the models a provider offers, with prices in USD per million tokens
where known (set on the provider, or published by OpenRouter), and each
model's context window in tokens where the provider reports it (OpenRouter,
vLLM, LM Studio, llama.cpp; "–" otherwise). PROVIDER is
the name or id of a stored provider, or with --file the name of a provider
in a run file (used as written, without storing it).
`

// modelRow is one model of a provider.
type modelRow struct {
	ID            string   `json:"id"`
	OwnedBy       string   `json:"owned_by,omitempty"`
	InputPerMTok  *float64 `json:"input_per_mtok"`
	OutputPerMTok *float64 `json:"output_per_mtok"`
	PriceSource   string   `json:"price_source,omitempty"`
	// ContextLength is the context window in tokens; omitted when not reported.
	ContextLength int64 `json:"context_length,omitempty"`
}

func (e *env) models(args []string) error {
	fs := newFlagSet("models", modelsUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db)
	file := fs.String("file", "", "take the provider from this run file instead of the database")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return usageErr("name one provider")
	}
	name := pos[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var p *store.Provider
	var st *store.Store
	if *file != "" {
		f, err := runfile.Load(*file, e.lookup)
		if err != nil {
			e.printProblems(err)
			return usageErr("%s has problems", *file)
		}
		for _, rp := range f.Providers {
			if strings.EqualFold(rp.Name, name) && !rp.RefOnly {
				in := rp.Input
				if err := in.Normalize(); err != nil {
					return usageErr("%s: provider %q: %v", filepath.Base(*file), name, err)
				}
				p = &store.Provider{Name: in.Name, Type: in.Type, BaseURL: in.BaseURL, ModelsEndpoint: in.ModelsEndpoint,
					InferenceEndpoint: in.InferenceEndpoint, TimeoutSeconds: in.TimeoutSeconds,
					ConnectTimeoutSeconds: in.ConnectTimeoutSeconds, Headers: in.Headers, Prices: in.Prices}
			}
		}
		if p == nil {
			return usageErr("%s defines no provider %q (with a base_url)", *file, name)
		}
	} else {
		st, err = e.openStore(ctx, db)
		if err != nil {
			return err
		}
		defer st.Close()
		id, err := providerID(ctx, st, name)
		if err != nil {
			return err
		}
		if p, err = st.ProviderWithSecrets(ctx, id); err != nil {
			return storeError(err)
		}
	}
	policy, err := e.egress()
	if err != nil {
		return err
	}
	eng := engine.New(engine.Config{Egress: policy}, st, engine.NewBroker(), log)
	list, err := eng.Client(p).Models(ctx)
	if err != nil {
		return failErr("provider %q: GET %s%s: %v", p.Name, p.BaseURL, p.ModelsEndpoint, err)
	}
	prices := map[string]store.ProviderPrice{}
	for _, pr := range p.Prices {
		prices[pr.Model] = pr
	}
	var published []store.ProviderPrice
	rows := make([]modelRow, len(list))
	for i, m := range list {
		rows[i] = modelRow{ID: m.ID, OwnedBy: m.OwnedBy, ContextLength: m.ContextLength}
		if pr, ok := prices[m.ID]; ok {
			rows[i].InputPerMTok, rows[i].OutputPerMTok, rows[i].PriceSource = &pr.InputPerMTok, &pr.OutputPerMTok, strings.ToLower(pr.Source)
		} else if in, out, ok := m.Pricing.PerMTok(); ok {
			rows[i].InputPerMTok, rows[i].OutputPerMTok, rows[i].PriceSource = &in, &out, "published"
			published = append(published, store.ProviderPrice{Model: m.ID, InputPerMTok: in, OutputPerMTok: out})
		}
	}
	// Keep prices OpenRouter publishes for cost tracking, as the web UI does.
	if st != nil && p.Type == store.ProviderOpenRouter && len(published) > 0 {
		if err := st.MergePublishedPrices(ctx, p.ID, published); err != nil {
			return failErr("%v", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tCONTEXT\tINPUT $/MTOK\tOUTPUT $/MTOK\tPRICE FROM")
	price := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, format.Tokens(r.ContextLength), price(r.InputPerMTok), price(r.OutputPerMTok), r.PriceSource)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s at %s: %s\n", p.Name, p.BaseURL, plural(len(rows), "model"))
	return nil
}

// providerID finds a stored provider by id or name (case-insensitive).
func providerID(ctx context.Context, st *store.Store, name string) (int64, error) {
	ps, err := st.Providers(ctx)
	if err != nil {
		return 0, failErr("%v", err)
	}
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		for _, p := range ps {
			if p.ID == id {
				return id, nil
			}
		}
	}
	var names []string
	for _, p := range ps {
		if strings.EqualFold(p.Name, name) {
			return p.ID, nil
		}
		names = append(names, fmt.Sprintf("%q", p.Name))
	}
	if len(names) == 0 {
		return 0, usageErr("no provider %q: the database has no providers", name)
	}
	return 0, usageErr("no provider %q (stored: %s)", name, strings.Join(names, ", "))
}
