// Command tribunal benchmarks LLMs on your own tasks: `tribunal` serves the
// web UI and runs the engine; `tribunal worker` runs only the engine.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"tribunal/cli"
	"tribunal/egress"
	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/metrics"
	"tribunal/runs"
	"tribunal/secret"
	"tribunal/store"
	"tribunal/watch"
)

// Config is everything read from flags and the environment, once.
type Config struct {
	Addr        string
	DataDir     string
	DatabaseURL string
	MasterKey   string
	OllamaURL   string
	LMStudioURL string
	WorkerOnly  bool
	LogLevel    slog.Level
	// MaxActiveRuns, MaxInFlight and Lease tune the engine.
	MaxActiveRuns int
	MaxInFlight   int
	Lease         time.Duration
	// Egress says which kinds of destination may reach private addresses.
	Egress *egress.Policy
	// AllowedHosts, AuthToken and InsecureNoAuth guard the web server (see handlers.Edge).
	AllowedHosts   []string
	AuthToken      string
	InsecureNoAuth bool
	// MaxRunItems bounds a run's tasks × targets × repeats.
	MaxRunItems int
	// AllowMCPCommands lets agents have stdio MCP servers, commands run on this machine.
	AllowMCPCommands bool
}

func main() {
	if len(os.Args) > 1 && cli.Handles(os.Args[1]) {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tribunal:", err)
		os.Exit(1)
	}
}

// memoryLimit is the serving process's soft memory limit unless GOMEMLIMIT
// sets one. A large run's statistics briefly hold a hundred MB or more;
// with GOGC alone the heap grows to twice what is live before a collection,
// which put a 1M-item run's analysis near 500 MB. The limit makes the
// collector run sooner as the heap nears it, and only then: below it
// nothing changes, and a heap that must exceed it still may.
const memoryLimit = 256 << 20

// limitMemory sets memoryLimit, unless the environment (lookup) sets GOMEMLIMIT.
func limitMemory(lookup func(string) (string, bool)) {
	if _, set := lookup("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
}

func parseConfig(args []string) (Config, error) {
	cfg := Config{}
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			args = args[1:]
		case "worker":
			cfg.WorkerOnly = true
			args = args[1:]
		}
	}
	fs := flag.NewFlagSet("tribunal", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tribunal [serve|worker] [flags]

  serve   (default) web UI, JSON API and engine
  worker  engine only: claims work from the shared PostgreSQL database

  run FILE.yaml        run a benchmark headless (tribunal run -h)
  validate FILE        check run files and task files
  import FILE          import tasks (CSV, JSONL, YAML, promptfoo, MT-Bench, OpenAI evals)
  export RUN_ID        write a run as csv, json or a self-contained html report
  export-tasks         write tasks back as YAML, JSONL or CSV that imports to the same tasks
  models PROVIDER      list a provider's models with prices and context windows
  recommend --usecase NAME   which model to use: your runs' models on its tasks, best first
  agents               list the saved agents (id, name, version, executor, model, MCP servers)
  bench                build a large run against a fake LLM and time it (tribunal bench -h)

Flags (each has an environment variable):
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.Addr, "addr", cmp.Or(os.Getenv("TRIBUNAL_ADDR"), "127.0.0.1:8080"), "listen address (TRIBUNAL_ADDR)")
	fs.StringVar(&cfg.DataDir, "data-dir", cmp.Or(os.Getenv("TRIBUNAL_DATA_DIR"), "data"), "directory of the embedded SQLite database and generated key (TRIBUNAL_DATA_DIR)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "postgres://… to use PostgreSQL instead of the embedded SQLite (DATABASE_URL)")
	fs.IntVar(&cfg.MaxActiveRuns, "max-active-runs", envInt("TRIBUNAL_MAX_ACTIVE_RUNS", 1), "how many runs may be active at once (TRIBUNAL_MAX_ACTIVE_RUNS)")
	fs.IntVar(&cfg.MaxRunItems, "max-run-items", envInt("TRIBUNAL_MAX_RUN_ITEMS", store.DefaultMaxRunItems), "how many items (tasks × targets × repeats) a run may have (TRIBUNAL_MAX_RUN_ITEMS)")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", envInt("TRIBUNAL_MAX_IN_FLIGHT", 64), "provider calls this process makes at once, at most (TRIBUNAL_MAX_IN_FLIGHT)")
	fs.DurationVar(&cfg.Lease, "lease", envDuration("TRIBUNAL_LEASE", 30*time.Second), "how long a dead worker's items stay claimed before others take them (TRIBUNAL_LEASE)")
	allowPrivate := fs.String("allow-private-egress", cmp.Or(os.Getenv("TRIBUNAL_ALLOW_PRIVATE_EGRESS"), egress.Default.String()),
		"destinations that may reach loopback and private addresses: providers, webhooks, or none (TRIBUNAL_ALLOW_PRIVATE_EGRESS)")
	allowedHosts := fs.String("allowed-hosts", os.Getenv("TRIBUNAL_ALLOWED_HOSTS"), "comma-separated host names (name or name:port) the server answers to besides localhost and the listen address (TRIBUNAL_ALLOWED_HOSTS)")
	fs.StringVar(&cfg.AuthToken, "auth-token", os.Getenv("TRIBUNAL_AUTH_TOKEN"), "token required of API calls (Authorization: Bearer) and to sign in to the UI; prefer the variable, a flag shows in ps (TRIBUNAL_AUTH_TOKEN)")
	fs.BoolVar(&cfg.InsecureNoAuth, "insecure-no-auth", envBool("TRIBUNAL_INSECURE_NO_AUTH"), "serve a non-loopback address without a token (TRIBUNAL_INSECURE_NO_AUTH=true)")
	fs.BoolVar(&cfg.AllowMCPCommands, "allow-mcp-commands", envBool("TRIBUNAL_ALLOW_MCP_COMMANDS"), "let agents have stdio MCP servers, which run a command on this machine (TRIBUNAL_ALLOW_MCP_COMMANDS=true)")
	level := fs.String("log-level", cmp.Or(os.Getenv("TRIBUNAL_LOG_LEVEL"), "info"), "debug, info, warn or error (TRIBUNAL_LOG_LEVEL)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q (see tribunal -h)", fs.Arg(0))
	}
	if cfg.MaxActiveRuns < 1 || cfg.MaxInFlight < 1 || cfg.MaxRunItems < 1 || cfg.Lease < time.Second {
		return cfg, errors.New("--max-active-runs, --max-in-flight and --max-run-items must be at least 1, --lease at least 1s")
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(*level)); err != nil {
		return cfg, fmt.Errorf("--log-level: %w", err)
	}
	policy, err := egress.Parse(*allowPrivate)
	if err != nil {
		return cfg, fmt.Errorf("--allow-private-egress: %w", err)
	}
	cfg.Egress = policy
	for _, h := range strings.Split(*allowedHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.AllowedHosts = append(cfg.AllowedHosts, h)
		}
	}
	if !cfg.WorkerOnly && cfg.AuthToken == "" && !cfg.InsecureNoAuth && !loopback(cfg.Addr) {
		return cfg, fmt.Errorf("--addr %s can be reached from other machines, and without a token anyone there can use Tribunal "+
			"and its providers' keys: set TRIBUNAL_AUTH_TOKEN (e.g. export TRIBUNAL_AUTH_TOKEN=$(openssl rand -hex 32)) "+
			"or --auth-token, listen on 127.0.0.1, or pass --insecure-no-auth (TRIBUNAL_INSECURE_NO_AUTH=true) to accept the risk", cfg.Addr)
	}
	cfg.MasterKey = os.Getenv("TRIBUNAL_MASTER_KEY")
	cfg.OllamaURL = cmp.Or(os.Getenv("OLLAMA_BASE_URL"), "http://127.0.0.1:11434")
	cfg.LMStudioURL = cmp.Or(os.Getenv("LMSTUDIO_BASE_URL"), "http://127.0.0.1:1234")
	return cfg, nil
}

// loopback reports whether addr (host:port) listens on this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func envBool(name string) bool {
	v, _ := strconv.ParseBool(os.Getenv(name))
	return v
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// masterKey returns the key for secret headers: TRIBUNAL_MASTER_KEY, or on
// SQLite a key generated once into the data dir.
func masterKey(cfg Config, log *slog.Logger) (string, error) {
	if cfg.MasterKey != "" {
		return cfg.MasterKey, nil
	}
	if cfg.DatabaseURL != "" {
		return "", errors.New("TRIBUNAL_MASTER_KEY must be set when using PostgreSQL (every process needs the same key)")
	}
	path := filepath.Join(cfg.DataDir, "master.key")
	key, created, err := secret.LoadOrCreateKeyFile(path)
	if err != nil {
		return "", err
	}
	if created {
		log.Warn("TRIBUNAL_MASTER_KEY is not set: generated a key for secret headers; back it up, or secrets cannot be read", "path", path)
	}
	return key, nil
}

func run(args []string) error {
	cfg, err := parseConfig(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(log)
	limitMemory(os.LookupEnv)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	key, err := masterKey(cfg, log)
	if err != nil {
		return err
	}
	box, err := secret.NewBox(key)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Config{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir, Box: box,
		MaxActiveRuns: cfg.MaxActiveRuns, MaxRunItems: cfg.MaxRunItems, Egress: cfg.Egress,
		AllowMCPCommands: cfg.AllowMCPCommands})
	if err != nil {
		return err
	}
	defer st.Close()
	log.Info("database ready", "dialect", st.Dialect())

	broker := engine.NewBroker()
	mets := metrics.New(st, log)
	eng := engine.New(engine.Config{MaxInFlight: cfg.MaxInFlight, Lease: cfg.Lease, Egress: cfg.Egress,
		ObserveCallFunc: mets.ObserveCall, ObserveFailureFunc: mets.ObserveFailure,
		RunEndedFunc: func(ctx context.Context, runID int64, counts store.Progress) error {
			return runs.StoreEnded(ctx, st, runID, counts)
		},
		ItemWeightsFunc: runs.ItemWeights}, st, broker, log)
	var wg sync.WaitGroup
	engineCtx, stopEngine := context.WithCancel(context.Background())
	defer wg.Wait()
	defer stopEngine() // runs first: the engine stops before we wait for it
	wg.Go(func() { eng.Run(engineCtx) })
	// Schedules, KPI values, alerts and their deliveries (package watch) run in every process.
	wcfg := watch.ConfigFromEnv(os.Getenv, "http://"+cfg.Addr)
	wcfg.Egress = cfg.Egress
	wg.Go(func() { watch.New(wcfg, st, runs.New(st, eng), log).Run(engineCtx) })

	if cfg.WorkerOnly {
		log.Info("worker running; stop with Ctrl-C")
		<-ctx.Done()
		stopEngine()
		return nil
	}

	if err := st.EnsureDefaultProviders(ctx, cfg.OllamaURL, cfg.LMStudioURL); err != nil {
		return err
	}
	// Live pages follow work done by worker processes too (PostgreSQL LISTEN).
	wg.Go(func() {
		st.ListenRuns(engineCtx, broker.Publish, func(err error) { log.Warn("listen for run changes", "err", err) })
	})
	// Open event streams end when shutdown starts instead of holding it up.
	streamsCtx, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	if cfg.InsecureNoAuth && cfg.AuthToken == "" && !loopback(cfg.Addr) {
		log.Warn("INSECURE: serving without authentication on a non-loopback address (--insecure-no-auth); "+
			"anyone who can reach it can read every run and spend every provider's credits", "addr", cfg.Addr)
	}
	web := handlers.New(st, eng, log, handlers.WithMetrics(mets),
		handlers.WithEdge(handlers.Edge{ListenAddr: cfg.Addr, AllowedHosts: cfg.AllowedHosts, AuthToken: cfg.AuthToken}))
	srv := newServer(cfg.Addr, web, streamsCtx)
	errc := make(chan error, 1)
	go func() {
		log.Info("Tribunal is up", "url", "http://"+cfg.Addr)
		errc <- srv.ListenAndServe()
	}()
	select {
	case err := <-errc:
		stopEngine()
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	endStreams()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	stopEngine() // the call in flight is released back to its queue
	return nil
}

// newServer bounds how long a client may take to send a request, to read
// a reply and to keep an idle connection. Event streams set a deadline per
// write instead (handlers/events.go), so they outlive WriteTimeout.
func newServer(addr string, h http.Handler, base context.Context) *http.Server {
	return &http.Server{Addr: addr, Handler: h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // a whole request: a 50 MB import on a slow link
		WriteTimeout:      5 * time.Minute, // the slowest reply: a large export, a provider test (2 min)
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base }}
}
