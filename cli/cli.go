// Package cli is Tribunal from the terminal and in CI: `tribunal run`
// benchmarks a run file headless with progress bars and gates, and
// validate, import, export, models, agents and recommend do one job each. Every
// command opens the same database as the server (the embedded SQLite in --data-dir, or
// PostgreSQL with --database-url), so what it does shows in the UI.
//
// Exit codes (see README, "Command line"):
//
//	0    success; every gate passed
//	1    a gate failed
//	2    usage or validation error (bad flags, bad run or task file, unknown names)
//	3    the run failed or was cancelled, or something went wrong (database, provider)
//	130  interrupted with Ctrl-C: the run is paused; `tribunal run --resume ID` continues it
package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tribunal/egress"
	"tribunal/secret"
	"tribunal/store"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitGateFailed  = 1
	ExitUsage       = 2
	ExitRunFailed   = 3
	ExitInterrupted = 130
)

// Commands are the subcommands this package runs.
var Commands = []string{"run", "validate", "import", "export", "export-tasks", "models", "agents", "recommend", "bench"}

// Handles reports whether name is one of Commands.
func Handles(name string) bool { return slices.Contains(Commands, name) }

// exitError carries an exit code with the message to print.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitError{ExitUsage, fmt.Sprintf(format, args...)}
}

func failErr(format string, args ...any) error {
	return &exitError{ExitRunFailed, fmt.Sprintf(format, args...)}
}

// env is what every command gets: output streams, the environment and the
// process signals, so tests can run commands in process too.
type env struct {
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
}

// Main runs the subcommand in args[0] and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, lookup: os.LookupEnv}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "tribunal: no command")
		return ExitUsage
	}
	var err error
	switch args[0] {
	case "run":
		err = e.run(args[1:])
	case "validate":
		err = e.validate(args[1:])
	case "import":
		err = e.importTasks(args[1:])
	case "export":
		err = e.export(args[1:])
	case "export-tasks":
		err = e.exportTasks(args[1:])
	case "models":
		err = e.models(args[1:])
	case "recommend":
		err = e.recommend(args[1:])
	case "agents":
		err = e.agents(args[1:])
	case "bench":
		err = e.bench(args[1:])
	default:
		err = usageErr("unknown command %q (commands: %s)", args[0], strings.Join(Commands, ", "))
	}
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "tribunal: "+ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "tribunal:", err)
	return ExitRunFailed
}

// dbFlags are the database flags every command that opens the store takes.
type dbFlags struct {
	dataDir     string
	databaseURL string
	logLevel    string
}

func (e *env) getenv(name string) string {
	v, _ := e.lookup(name)
	return v
}

func (e *env) addDBFlags(fs *flag.FlagSet, d *dbFlags) {
	fs.StringVar(&d.dataDir, "data-dir", cmp.Or(e.getenv("TRIBUNAL_DATA_DIR"), "data"), "directory of the embedded SQLite database (TRIBUNAL_DATA_DIR)")
	fs.StringVar(&d.databaseURL, "database-url", e.getenv("DATABASE_URL"), "postgres://… to use PostgreSQL instead of SQLite (DATABASE_URL)")
	fs.StringVar(&d.logLevel, "log-level", cmp.Or(e.getenv("TRIBUNAL_LOG_LEVEL"), "warn"), "debug, info, warn or error (TRIBUNAL_LOG_LEVEL)")
}

func (e *env) envInt(name string, def int) int {
	if v, err := strconv.Atoi(e.getenv(name)); err == nil {
		return v
	}
	return def
}

// egress is the policy of TRIBUNAL_ALLOW_PRIVATE_EGRESS, as the server reads it.
func (e *env) egress() (*egress.Policy, error) {
	p, err := egress.Parse(cmp.Or(e.getenv("TRIBUNAL_ALLOW_PRIVATE_EGRESS"), egress.Default.String()))
	if err != nil {
		return nil, usageErr("TRIBUNAL_ALLOW_PRIVATE_EGRESS: %v", err)
	}
	return p, nil
}

// logger writes structured logs to w at the flags' level.
func (d dbFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(d.logLevel)); err != nil {
		return nil, usageErr("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), nil
}

// openStore opens the database like the server does: TRIBUNAL_MASTER_KEY,
// or on SQLite the key generated into the data dir.
func (e *env) openStore(ctx context.Context, d dbFlags) (*store.Store, error) {
	key := e.getenv("TRIBUNAL_MASTER_KEY")
	if key == "" {
		if d.databaseURL != "" {
			return nil, usageErr("TRIBUNAL_MASTER_KEY must be set when using PostgreSQL (every process needs the same key)")
		}
		k, created, err := secret.LoadOrCreateKeyFile(filepath.Join(d.dataDir, "master.key"))
		if err != nil {
			return nil, failErr("%v", err)
		}
		if created {
			fmt.Fprintf(e.stderr, "note: generated a key for secret headers in %s; back it up with the database\n", filepath.Join(d.dataDir, "master.key"))
		}
		key = k
	}
	box, err := secret.NewBox(key)
	if err != nil {
		return nil, failErr("%v", err)
	}
	policy, err := e.egress()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, store.Config{DatabaseURL: d.databaseURL, DataDir: d.dataDir, Box: box,
		MaxActiveRuns: max(e.envInt("TRIBUNAL_MAX_ACTIVE_RUNS", 1), 1), MaxRunItems: max(e.envInt("TRIBUNAL_MAX_RUN_ITEMS", 0), 0),
		Egress: policy})
	if err != nil {
		return nil, failErr("%v", err)
	}
	return st, nil
}

// parseFlags parses flags anywhere among the arguments (`run FILE --out x`
// as well as `run --out x FILE`) and returns the positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErr("%v", err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("tribunal "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// storeError turns store validation and lookup errors into usage errors.
func storeError(err error) error {
	var ve *store.ValidationError
	var nf *store.NotFoundError
	var ce *store.ConflictError
	switch {
	case errors.As(err, &ve):
		return usageErr("%s", ve.Error())
	case errors.As(err, &nf):
		return usageErr("%s", nf.Error())
	case errors.As(err, &ce):
		return failErr("%s", ce.Error())
	}
	return failErr("%v", err)
}
