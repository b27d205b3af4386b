package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"tribunal/engine"
	"tribunal/importer"
	"tribunal/runs"
	"tribunal/store"
)

// outputsFlags are the flags of tribunal import --outputs.
type outputsFlags struct {
	file, judgeProvider, judgeModel, judgeIDs, checks string
	collection, name, tags                            string
	follow, asJSON                                    bool
	db                                                dbFlags
}

// importOutputs imports a file of answers as an IMPORTED run (see
// runs.Service.ImportOutputs) and prints its id and counts; with --follow it
// scores the run in this process and finishes like tribunal run.
func (e *env) importOutputs(o outputsFlags) error {
	data, err := os.ReadFile(o.file)
	if err != nil {
		return usageErr("%s: cannot read: %v", o.file, errors.Unwrap(err))
	}
	read := importer.ReadOutputs(filepath.Base(o.file), data, "")
	if len(read.Errors) > 0 {
		n := e.printImportErrors(o.file, read.Errors)
		return usageErr("%s; nothing was imported", plural(n, "problem"))
	}
	opts := runs.OutputsOptions{Collection: o.collection, Name: o.name, Tags: store.ParseTags(o.tags), TriggeredBy: "CLI"}
	for _, part := range strings.Split(o.checks, ",") {
		if part = strings.TrimSpace(part); part != "" {
			opts.Checks = append(opts.Checks, part)
		}
	}
	for _, part := range strings.Split(o.judgeIDs, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil || id <= 0 {
			return usageErr("--judge-ids: %q is not a judge's id", part)
		}
		opts.JudgeIDs = append(opts.JudgeIDs, id)
	}
	if (o.judgeProvider == "") != (o.judgeModel == "") {
		return usageErr("--judge-provider and --judge-model go together")
	}

	bg := context.Background()
	st, err := e.openStore(bg, o.db)
	if err != nil {
		return err
	}
	defer st.Close()
	if o.judgeProvider != "" {
		id, err := providerID(bg, st, o.judgeProvider)
		if err != nil {
			return err
		}
		opts.Judge = &store.ModelRef{ProviderID: id, Model: o.judgeModel}
	}
	prog := newProgress(e.stderr, false, 10*time.Second)
	o.db.logLevel = cmp.Or(o.db.logLevel, "warn")
	log, err := o.db.logger(lineWriter{prog})
	if err != nil {
		return err
	}
	policy, err := e.egress()
	if err != nil {
		return err
	}
	broker := engine.NewBroker()
	eng := engine.New(engine.Config{PollInterval: 200 * time.Millisecond, Egress: policy, ItemWeightsFunc: runs.ItemWeights},
		st, broker, log)
	res, err := runs.New(st, eng).ImportOutputs(bg, read.Rows, opts)
	var es importer.Errors
	var ve *store.ValidationError
	switch {
	case errors.As(err, &es):
		n := e.printImportErrors(o.file, es)
		return usageErr("%s; nothing was imported", plural(n, "problem"))
	case errors.As(err, &ve):
		return usageErr("nothing was imported: %s", ve.Error())
	case err != nil:
		return storeError(err)
	}
	if o.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "Imported %s from %s (%s, %s) as run %d: %d tasks created, %d updated\n",
			plural(res.Items, "answer"), o.file, read.Format, plural(res.Models, "model"), res.RunID, res.TasksCreated, res.TasksUpdated)
	}
	if !o.follow {
		if !o.asJSON {
			fmt.Fprintf(e.stdout, "  the server (or a tribunal worker) scores it; or follow it here: tribunal run --resume %d\n", res.RunID)
		}
		return nil
	}
	run, err := st.Run(bg, res.RunID)
	if err != nil {
		return storeError(err)
	}
	ctx, stop := signal.NotifyContext(bg, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := e.follow(ctx, stop, st, eng, broker, prog, run, nil, 0); err != nil {
		return err
	}
	return e.finish(bg, st, run.ID, nil, "")
}
