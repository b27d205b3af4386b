package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"tribunal/engine"
	"tribunal/runfile"
	"tribunal/runs"
	"tribunal/store"
)

// startRun saves the file's providers, tasks, styles and judges, and starts the run.
func (e *env) startRun(ctx context.Context, st *store.Store, eng *engine.Engine, f *runfile.File, name string, extraTags []string) (*store.Run, error) {
	in, err := e.prepareRun(ctx, st, eng, f, name, extraTags, e.stderr)
	if err != nil {
		return nil, err
	}
	run, err := eng.StartRun(ctx, in)
	if err != nil {
		var ce *store.ConflictError
		if errors.As(err, &ce) {
			return nil, failErr("cannot start the run: %s; resume it with tribunal run --resume ID, or cancel it in the UI", ce.Message)
		}
		return nil, e.runInputError(f, "start the run", err)
	}
	p, _ := st.RunProgress(ctx, run.ID)
	judge := "no judge (checks only)"
	if len(run.Judges) == 1 {
		judge = "judge " + run.Judges[0].Name
	} else if len(run.Judges) > 1 {
		judge = fmt.Sprintf("a panel of %d judges", len(run.Judges))
	}
	fmt.Fprintf(e.stderr, "Run %d %q started: %d items (%s × %s", run.ID, run.Name, p.Total,
		plural(int(p.Total)/max(len(run.Targets)*max(run.Repeats, 1), 1), "task"), plural(len(run.Targets), "model"))
	if run.Repeats > 1 {
		fmt.Fprintf(e.stderr, " × %d repeats", run.Repeats)
	}
	fmt.Fprintf(e.stderr, "), %s; it shows in the UI as /runs/%d\n", judge, run.ID)
	return run, nil
}

// runInputError reports a run the store refused: a validation error with
// the line of the file it came from, anything else as a failure to what.
func (e *env) runInputError(f *runfile.File, what string, err error) error {
	var ve *store.ValidationError
	if errors.As(err, &ve) {
		probs := &problems{file: f.Path}
		probs.add(f.LineOf(ve.Field), ve.Field, "%s", ve.Message)
		return e.fail(probs)
	}
	return failErr("%s: %v", what, err)
}

// prepareRun checks the file against the database, saves its providers,
// tasks, styles and judges (saying so on log), and answers the RunInput of
// its run. It writes only through st, so a transaction's st can take it all
// back (see estimateRun).
func (e *env) prepareRun(ctx context.Context, st *store.Store, eng *engine.Engine, f *runfile.File, name string, extraTags []string, log io.Writer) (store.RunInput, error) {
	var none store.RunInput
	known, probs, err := lookUpNames(ctx, st, f)
	if err != nil {
		return none, err
	}
	if len(probs.list) > 0 {
		return none, e.fail(probs)
	}
	providerByName, colByName, judgeByName, styleByName := known.providers, known.collections, known.judges, known.styles

	// Save the providers: create, or update the stored one of the same name.
	providerIDs := map[string]int64{}
	for _, p := range f.Providers {
		old := providerByName[strings.ToLower(p.Name)]
		switch {
		case p.RefOnly:
			providerIDs[p.Name] = old.ID
			fmt.Fprintf(log, "provider %q: using the stored one (id %d)\n", p.Name, old.ID)
		case old != nil:
			in := p.Input
			in.Name = old.Name
			if in.Type == "" {
				in.Type = old.Type
			}
			if _, err := st.UpdateProvider(ctx, old.ID, in); err != nil {
				return none, e.providerError(probs, p, err)
			}
			providerIDs[p.Name] = old.ID
			fmt.Fprintf(log, "provider %q: updated the stored one (id %d) from the run file\n", p.Name, old.ID)
		default:
			np, err := st.CreateProvider(ctx, p.Input)
			if err != nil {
				return none, e.providerError(probs, p, err)
			}
			providerIDs[p.Name] = np.ID
			fmt.Fprintf(log, "provider %q: created (id %d)\n", p.Name, np.ID)
		}
	}

	// Save the tasks into the run file's collection.
	in := store.RunInput{Name: cmp.Or(name, f.Name), TriggeredBy: "CLI", Metrics: f.Metrics, Weights: f.Weights,
		Repeats: f.Repeats, SystemPrompt: f.SystemPrompt, MaxCostUSD: f.MaxCostUSD, Pipeline: f.Pipeline, Tags: append(append([]string{}, f.Tags...), extraTags...),
		TaskSelection: f.Selection}
	if in.Name == "" {
		in.Name = strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
	}
	if len(f.Tasks) > 0 {
		res, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: f.Tasks, Collection: f.Collection})
		if err != nil {
			return none, usageErr("%s: tasks: %v; nothing was run", f.Path, err)
		}
		state := "existing"
		if res.CollectionCreated {
			state = "new"
		}
		fmt.Fprintf(log, "tasks: %d created, %d updated, in %s collection %q\n", res.Created, res.Updated, state, res.Collection.Name)
		if res.Updated > 0 {
			fmt.Fprintf(log, "  updated (their task_id existed): %s\n", listSome(res.UpdatedIDs, 10))
		}
		in.CollectionIDs = append(in.CollectionIDs, res.Collection.ID)
		// Exactly the file's tasks (the collection may hold tasks from earlier versions of the file).
		for _, k := range res.TaskIDs {
			in.TaskIDs = append(in.TaskIDs, store.TaskRef{Key: k})
		}
	}
	for _, c := range f.Collections {
		col := colByName[c.Name]
		in.CollectionIDs = append(in.CollectionIDs, col.ID)
		if len(in.TaskIDs) > 0 {
			d, err := st.Collection(ctx, col.ID)
			if err != nil {
				return none, failErr("%v", err)
			}
			for _, id := range d.TaskIDs {
				in.TaskIDs = append(in.TaskIDs, store.TaskRef{ID: id})
			}
		}
	}
	if len(f.TaskIDs) > 0 { // hand-picked: exactly these
		in.TaskIDs = nil
		for _, k := range f.TaskIDs {
			in.TaskIDs = append(in.TaskIDs, store.TaskRef{Key: k})
		}
	}
	// models: auto: the recommended models, once the file's tasks (which may
	// name the use case) are saved.
	var auto []runs.RecommendedModel
	if f.AutoModels {
		auto, err = runs.New(st, eng).AutoTargets(ctx, runs.RecommendQuery{UseCase: f.UseCase.Name, Category: f.Category}, runfile.AutoModelCount)
		var ve *store.ValidationError
		var nf *store.NotFoundError
		switch {
		case errors.As(err, &ve):
			probs.add(f.LineOf("models"), "models", "%s", ve.Message)
			return none, e.fail(probs)
		case errors.As(err, &nf):
			probs.add(f.LineOf("models"), "models", "auto: %s: no task names it", nf.Error())
			return none, e.fail(probs)
		}
		if err != nil {
			return none, storeError(err)
		}
	}

	for _, t := range f.Targets {
		if t.AgentID != 0 {
			in.Targets = append(in.Targets, store.ModelRef{AgentID: t.AgentID, Tags: t.Tags})
			continue
		}
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: providerIDs[t.Provider], Model: t.Model, Settings: t.Settings, Tags: t.Tags, Version: t.Version})
	}
	for _, m := range auto {
		ref := store.ModelRef{Model: m.Model}
		if m.AgentID != nil {
			ref = store.ModelRef{AgentID: *m.AgentID}
		} else {
			ref.ProviderID = *m.ProviderID
		}
		if slices.ContainsFunc(in.Targets, func(t store.ModelRef) bool {
			return t.AgentID == ref.AgentID && t.ProviderID == ref.ProviderID && t.Model == ref.Model
		}) {
			continue // listed under targets: already
		}
		in.Targets = append(in.Targets, ref)
		fmt.Fprintf(e.stderr, "models: auto: %s — %s\n", m.Label(), m.Reason)
	}

	// Judges: a plain model, or saved judges (created or reused).
	if len(f.Judges) == 1 && !f.Judges[0].Saved() {
		j := f.Judges[0]
		in.Judge = &store.ModelRef{ProviderID: providerIDs[j.Provider], Model: j.Model, Settings: j.Settings}
	} else {
		for _, j := range f.Judges {
			id, err := e.savedJudge(ctx, st, j, providerIDs, judgeByName, styleByName, log)
			if err != nil {
				return none, err
			}
			in.JudgeIDs = append(in.JudgeIDs, id)
		}
	}

	return in, nil
}

func (e *env) providerError(probs *problems, p runfile.Provider, err error) error {
	var ve *store.ValidationError
	if errors.As(err, &ve) {
		probs.add(p.Line, fmt.Sprintf("providers[%q].%s", p.Name, ve.Field), "%s", ve.Message)
		return e.fail(probs)
	}
	return failErr("provider %q: %v", p.Name, err)
}

// savedJudge returns the id of the judge the file describes: a saved judge by
// name, or one created (or updated, when its name exists with other settings).
func (e *env) savedJudge(ctx context.Context, st *store.Store, j runfile.Judge, providerIDs map[string]int64,
	byName map[string]store.Judge, styles map[string]store.JudgementStyle, log io.Writer) (int64, error) {
	if j.Provider == "" {
		sj := byName[strings.ToLower(j.Name)]
		fmt.Fprintf(log, "judge %q: using the saved one (id %d)\n", sj.Name, sj.ID)
		return sj.ID, nil
	}
	var styleID int64
	switch {
	case j.StyleDef != nil:
		def := *j.StyleDef
		if old, ok := styles[strings.ToLower(def.Name)]; ok {
			if sameStyle(ctx, old, def) {
				styleID = old.ID
			} else {
				s, err := st.UpdateStyle(ctx, old.ID, def)
				if err != nil {
					return 0, usageErr("judge style %q: %v", def.Name, err)
				}
				styleID = s.ID
				fmt.Fprintf(log, "style %q: saved version %d from the run file\n", s.Name, s.Version)
			}
		} else {
			s, err := st.CreateStyle(ctx, def)
			if err != nil {
				return 0, usageErr("judge style %q: %v", def.Name, err)
			}
			styleID = s.ID
			styles[strings.ToLower(s.Name)] = *s
			fmt.Fprintf(log, "style %q: created (id %d)\n", s.Name, s.ID)
		}
	case j.Style != "":
		styleID = styles[strings.ToLower(j.Style)].ID
	}
	in := store.JudgeInput{Name: j.Name, ProviderID: providerIDs[j.Provider], Model: j.Model, PersonalityName: j.Personality,
		PersonalityDescription: j.PersonalityDescription, StyleID: styleID, Settings: j.Settings}
	if in.Name == "" {
		in.Name = j.Model
		if j.Personality != "" {
			in.Name += " (" + j.Personality + ")"
		}
	}
	if in.StyleID == 0 {
		def, err := st.DefaultStyle(ctx)
		if err != nil {
			return 0, failErr("%v", err)
		}
		in.StyleID = def.ID
	}
	if old, ok := byName[strings.ToLower(in.Name)]; ok {
		if old.ProviderID != nil && *old.ProviderID == in.ProviderID && old.Model == in.Model && old.StyleID == in.StyleID &&
			old.PersonalityName == in.PersonalityName && old.PersonalityDescription == in.PersonalityDescription &&
			sameSettings(old.Settings, in.Settings) {
			fmt.Fprintf(log, "judge %q: reusing the saved one (id %d)\n", old.Name, old.ID)
			return old.ID, nil
		}
		nj, err := st.UpdateJudge(ctx, old.ID, in)
		if err != nil {
			return 0, usageErr("judge %q: %v", in.Name, err)
		}
		byName[strings.ToLower(nj.Name)] = *nj
		fmt.Fprintf(log, "judge %q: updated the saved one (id %d, version %d) from the run file\n", nj.Name, nj.ID, nj.Version)
		return nj.ID, nil
	}
	nj, err := st.CreateJudge(ctx, in)
	if err != nil {
		return 0, usageErr("judge %q: %v", in.Name, err)
	}
	byName[strings.ToLower(nj.Name)] = *nj
	fmt.Fprintf(log, "judge %q: created (id %d)\n", nj.Name, nj.ID)
	return nj.ID, nil
}

func sameSettings(a, b store.TargetSettings) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func sameStyle(ctx context.Context, old store.JudgementStyle, def store.StyleInput) bool {
	if err := def.Normalize(ctx); err != nil {
		return false
	}
	if old.ScaleMin != def.ScaleMin || old.ScaleMax != def.ScaleMax || len(old.Metrics) != len(def.Metrics) {
		return false
	}
	if def.PromptTemplate != "" && def.PromptTemplate != old.PromptTemplate {
		return false
	}
	for i := range def.Metrics {
		if old.Metrics[i] != def.Metrics[i] {
			return false
		}
	}
	return true
}

// stored is what the names of a run file are in the database.
type stored struct {
	providers   map[string]*store.Provider // by lower-case name
	collections map[string]store.Collection
	judges      map[string]store.Judge          // by lower-case name
	styles      map[string]store.JudgementStyle // by lower-case name
}

// lookUpNames finds every name a run file gives in the database (stored
// providers, collections, saved judges, judgement styles, agents) and checks
// that its gates name metrics the run will have. run and validate both call
// it, so validate says OK exactly when run would start. A database error is
// the error; what the file gets wrong is in the problems.
func lookUpNames(ctx context.Context, st *store.Store, f *runfile.File) (*stored, *problems, error) {
	probs := &problems{file: f.Path}
	providers, err := st.Providers(ctx)
	if err != nil {
		return nil, nil, failErr("%v", err)
	}
	providerByName := map[string]*store.Provider{}
	for i := range providers {
		providerByName[strings.ToLower(providers[i].Name)] = &providers[i]
	}
	for _, p := range f.Providers {
		if p.RefOnly && providerByName[strings.ToLower(p.Name)] == nil {
			probs.add(p.Line, "providers", "no stored provider %q: give its base_url to create it", p.Name)
		}
	}
	cols, err := st.Collections(ctx)
	if err != nil {
		return nil, nil, failErr("%v", err)
	}
	colByName := map[string]store.Collection{}
	for _, c := range cols {
		colByName[c.Name] = c
	}
	for _, c := range f.Collections {
		if _, ok := colByName[c.Name]; !ok {
			probs.add(c.Line, "collections", "no collection %q", c.Name)
		}
	}
	judges, err := st.Judges(ctx)
	if err != nil {
		return nil, nil, failErr("%v", err)
	}
	judgeByName := map[string]store.Judge{}
	for _, j := range judges {
		judgeByName[strings.ToLower(j.Name)] = j
	}
	styles, err := st.Styles(ctx)
	if err != nil {
		return nil, nil, failErr("%v", err)
	}
	styleByName := map[string]store.JudgementStyle{}
	for _, s := range styles {
		styleByName[strings.ToLower(s.Name)] = s
	}
	if f.HasAgents() {
		agents, err := st.Agents(ctx)
		if err != nil {
			return nil, nil, failErr("%v", err)
		}
		var ps runfile.Problems
		if errors.As(f.ResolveAgents(agents), &ps) {
			probs.list = append(probs.list, ps...)
		}
	}
	if len(f.Judges) == 0 && f.UseCase.Name != "" && !f.ChecksOnly() {
		switch uc, err := st.UseCaseNamed(ctx, f.UseCase.Name); {
		case errors.Is(err, store.ErrNotFound):
			probs.add(f.UseCase.Line, "usecase", "no saved use case %q, so no default judge: add judge:, or import the use-case file", f.UseCase.Name)
		case err != nil:
			return nil, nil, failErr("%v", err)
		case uc.DefaultJudgeModel == "":
			probs.add(f.UseCase.Line, "usecase", "use case %q has no default_judge_model: add judge:", f.UseCase.Name)
		default:
			if j, why := f.UseCaseJudge(uc.DefaultJudgeModel); why != "" {
				probs.add(f.UseCase.Line, "usecase", "the default judge model of use case %q: %s", f.UseCase.Name, why)
			} else {
				f.Judges = append(f.Judges, j)
			}
		}
	}
	metricNames := map[string]bool{}
	for _, m := range runfile.BuiltinMetrics {
		metricNames[m] = true
	}
	for _, t := range store.CheckTypes {
		metricNames["check_"+t] = true
	}
	for _, j := range f.Judges {
		var ms []store.Metric
		switch {
		case j.Provider == "":
			sj, ok := judgeByName[strings.ToLower(j.Name)]
			if !ok {
				probs.add(j.Line, "judge", "no saved judge %q", j.Name)
				continue
			}
			for _, s := range styles {
				if s.ID == sj.StyleID {
					ms = s.Metrics
				}
			}
		case j.StyleDef != nil:
			ms = j.StyleDef.Metrics
		case j.Style != "":
			s, ok := styleByName[strings.ToLower(j.Style)]
			if !ok {
				var names []string
				for _, s := range styles {
					names = append(names, fmt.Sprintf("%q", s.Name))
				}
				probs.add(j.Line, "judge.style", "no judgement style %q (styles: %s)", j.Style, strings.Join(names, ", "))
				continue
			}
			ms = s.Metrics
		}
		for _, m := range ms {
			metricNames[m.Name] = true
		}
	}
	for _, g := range f.Gates.Metrics() {
		if !metricNames[g.Metric] {
			var known []string
			for k := range metricNames {
				known = append(known, k)
			}
			slices.Sort(known)
			probs.add(g.Line, "gates."+g.Key, "the run has no metric %q (metrics: %s)", g.Metric, strings.Join(known, ", "))
		}
	}
	return &stored{providers: providerByName, collections: colByName, judges: judgeByName, styles: styleByName}, probs, nil
}
