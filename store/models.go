package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"tribunal/mcpclient"
	"tribunal/prompt"
	"tribunal/rubric"
)

// ProviderType is the kind of OpenAI-compatible service a provider is.
type ProviderType string

// The provider types of seed 000.
const (
	ProviderOpenAI     ProviderType = "OPENAI"
	ProviderOllama     ProviderType = "OLLAMA"
	ProviderLMStudio   ProviderType = "LM_STUDIO"
	ProviderOpenRouter ProviderType = "OPENROUTER"
	ProviderCustom     ProviderType = "CUSTOM_OPEN_AI_COMPATIBLE"
)

// ProviderTypes lists every provider type in display order.
var ProviderTypes = []ProviderType{ProviderOpenAI, ProviderOllama, ProviderLMStudio, ProviderOpenRouter, ProviderCustom}

// Provider is an OpenAI-compatible endpoint with its headers.
type Provider struct {
	ID                    int64           `json:"id"`
	Name                  string          `json:"name"`
	Type                  ProviderType    `json:"type"`
	BaseURL               string          `json:"base_url"`
	ModelsEndpoint        string          `json:"models_endpoint"`
	InferenceEndpoint     string          `json:"inference_endpoint"`
	Concurrency           int             `json:"concurrency"`
	RequestsPerMinute     int             `json:"requests_per_minute"`
	TimeoutSeconds        int             `json:"timeout_seconds"`
	ConnectTimeoutSeconds int             `json:"connect_timeout_seconds"`
	CreatedAt             time.Time       `json:"created_at"`
	UpdatedAt             time.Time       `json:"updated_at"`
	Headers               []Header        `json:"headers" gorm:"foreignKey:ProviderID"`
	Prices                []ProviderPrice `json:"prices" gorm:"foreignKey:ProviderID"`
}

// Header is one HTTP header sent to a provider. Value holds plain text in
// memory; secret values are sealed by the store on write and masked on read
// unless the caller asks for the plain value.
type Header struct {
	ID         int64  `json:"-"`
	ProviderID int64  `json:"-"`
	Position   int    `json:"-"`
	Key        string `json:"key" gorm:"column:header_key"`
	Value      string `json:"value" gorm:"column:header_value"`
	IsSecret   bool   `json:"is_secret"`
}

// TableName maps Header to provider_headers.
func (Header) TableName() string { return "provider_headers" }

// Task is one benchmark prompt with optional reference answers.
type Task struct {
	ID                       int64  `json:"id"`
	TaskKey                  string `json:"task_id"`
	Category                 string `json:"category"`
	Subcategory              string `json:"subcategory"`
	Question                 string `json:"question"`
	Excellent                string `json:"excellent"`
	Good                     string `json:"good"`
	Pass                     string `json:"pass"`
	IncorrectAnswerDirection string `json:"incorrect_answer_direction"`
	TaskFields
	Metadata  map[string]string `json:"metadata" gorm:"serializer:json"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
}

// TaskFields are the task fields of the evaluation issue, shared by tasks
// and the runs' frozen copies of them.
type TaskFields struct {
	Reference         string   `json:"reference"`
	Turns             []string `json:"turns" gorm:"serializer:json"`
	SystemPrompt      string   `json:"system_prompt"`
	UseCase           string   `json:"usecase" gorm:"column:usecase"`
	Tags              []string `json:"tags" gorm:"serializer:json"`
	Constraints       string   `json:"constraints"`
	Examples          string   `json:"examples"`
	JudgeInstructions string   `json:"judge_instructions"`
	Comments          string   `json:"comments"`
	InputData         string   `json:"input" gorm:"column:input"`
	PromptTemplate    string   `json:"prompt_template"`
	Checks            []Check  `json:"checks" gorm:"serializer:json"`
}

// PromptTask is what package prompt builds the model's prompt from.
func (t *TaskFields) PromptTask(question string) prompt.Task {
	return prompt.Task{Question: question, Turns: t.Turns, Input: t.InputData, Constraints: t.Constraints,
		Examples: t.Examples, PromptTemplate: t.PromptTemplate}
}

// Collection is a named set of tasks.
type Collection struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	TaskCount   int64     `json:"task_count" gorm:"->;-:migration"`
	Tags        TagList   `json:"tags"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type collectionTask struct {
	CollectionID int64
	TaskID       int64
}

func (collectionTask) TableName() string { return "collection_tasks" }

// RunStatus is where a run is in its life.
type RunStatus string

// Run statuses. PENDING, RUNNING and PAUSED runs are active.
const (
	RunPending   RunStatus = "PENDING"
	RunRunning   RunStatus = "RUNNING"
	RunPaused    RunStatus = "PAUSED"
	RunFinished  RunStatus = "FINISHED"
	RunFailed    RunStatus = "FAILED"
	RunCancelled RunStatus = "CANCELLED"
)

// ActiveRunStatuses are the statuses that count against the active-run limit.
var ActiveRunStatuses = []RunStatus{RunPending, RunRunning, RunPaused}

// Active reports whether a run in this status is still to finish.
func (s RunStatus) Active() bool { return slices.Contains(ActiveRunStatuses, s) }

// Phase is the engine phase of a run.
type Phase string

// The two phases of seed 000: all benchmarking, then all judging.
const (
	PhaseBenchmarking Phase = "BENCHMARKING"
	PhaseJudging      Phase = "JUDGING"
)

// Run is one benchmark execution.
type Run struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Status      RunStatus `json:"status"`
	Phase       Phase     `json:"phase"`
	TriggeredBy string    `json:"triggered_by"`
	// Kind is BENCHMARK (Tribunal asks the targets) or IMPORTED (the
	// answers existed already: a trace source's dataset run, or a file).
	Kind        RunKind    `json:"kind"`
	Repeats     int        `json:"repeats"`
	Options     RunOptions `json:"options" gorm:"serializer:json"`
	SourceRunID *int64     `json:"source_run_id"`
	ScheduleID  *int64     `json:"schedule_id"`
	Error       string     `json:"error"`
	Tags        TagList    `json:"tags"`
	Snapshot    string     `json:"-"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	// DeletedAt marks a run being deleted (see DeleteRun): GORM leaves it
	// out of every query of runs it builds; raw SQL says so itself.
	DeletedAt gorm.DeletedAt `json:"-"`

	Targets     []RunTarget     `json:"targets" gorm:"foreignKey:RunID"`
	Judges      []RunJudge      `json:"judges" gorm:"foreignKey:RunID"`
	Collections []RunCollection `json:"collections" gorm:"foreignKey:RunID"`
}

// RunKind says where a run's answers come from.
type RunKind string

// The run kinds.
const (
	RunBenchmark RunKind = "BENCHMARK"
	RunImported  RunKind = "IMPORTED"
)

// Active reports whether the run still has work ahead of it.
func (r *Run) Active() bool { return r.Status.Active() }

// Elapsed is how long the run has been going (or went), pauses included; 0 before it started.
func (r *Run) Elapsed(now time.Time) time.Duration {
	if r.StartedAt == nil {
		return 0
	}
	end := now
	if r.FinishedAt != nil {
		end = *r.FinishedAt
	}
	return max(end.Sub(*r.StartedAt), 0)
}

// RunCollection records which collection a run drew its tasks from.
type RunCollection struct {
	ID             int64  `json:"-"`
	RunID          int64  `json:"-"`
	CollectionID   *int64 `json:"id"`
	CollectionName string `json:"name"`
}

// Warm-up states of a run target.
const (
	WarmupPending = "PENDING"
	WarmupOK      = "OK"
	WarmupFailed  = "FAILED"
)

// RunTarget is one model under test in a run.
type RunTarget struct {
	ID           int64  `json:"id"`
	RunID        int64  `json:"-"`
	Position     int    `json:"-"`
	ProviderID   *int64 `json:"provider_id"`
	ProviderName string `json:"provider"`
	Model        string `json:"model"`
	// Version is the model's version: as the user named it, else the model
	// id the provider reported in the target's first reply ("" before it).
	Version         string         `json:"version"`
	VersionReported bool           `json:"version_reported"`
	Settings        TargetSettings `json:"settings" gorm:"serializer:json"`
	Tags            TagList        `json:"tags"`
	WarmupStatus    string         `json:"warmup_status"`
	WarmupError     string         `json:"warmup_error,omitempty"`
	WarmupWorker    string         `json:"-"`
	WarmupUntil     *time.Time     `json:"-"`
	Price
	// AgentID, AgentName and AgentVersion name the agent the target runs;
	// zero for a model target. The agent may be deleted since.
	AgentID      *int64 `json:"agent_id,omitempty"`
	AgentName    string `json:"agent_name,omitempty"`
	AgentVersion int    `json:"agent_version,omitempty"`
	// Agent is the config the run froze, secrets sealed (OpenAgentSecrets).
	Agent *AgentInput `json:"-" gorm:"serializer:json"`
	// Tools is the tool list the agent's servers offered at warm-up.
	Tools []mcpclient.Tool `json:"tools,omitempty" gorm:"serializer:json"`
	// Imported marks a target whose answers were imported, not asked for;
	// Source says which dataset run of a trace source they came from.
	Imported  bool       `json:"imported,omitempty"`
	Source    *RunSource `json:"source,omitempty" gorm:"serializer:json"`
	SourceKey string     `json:"-"`
}

// RunSource is the dataset run of a trace source an imported target holds.
type RunSource struct {
	SourceID int64  `json:"source_id"`
	Dataset  string `json:"dataset"`
	Run      string `json:"run"`
	// SourceName is the source's name at import, shown once it is deleted.
	SourceName string `json:"source_name,omitempty"`
}

// Key identifies the dataset run, so it is imported once.
func (s RunSource) Key() string { return fmt.Sprintf("%d:%q:%q", s.SourceID, s.Dataset, s.Run) }

// IsAgent reports whether the target is an agent rather than a bare model.
func (t RunTarget) IsAgent() bool { return t.Agent != nil }

// Lane names the queue a target's group waits in: its provider's, so that
// one provider's groups run one after another (a local server never swaps
// models mid-group) while different providers' run at once. A target that
// calls no provider of its own (an http-executor agent, imported answers,
// a deleted provider) is a lane by itself.
func (t RunTarget) Lane() string {
	if t.Imported || t.ProviderID == nil || (t.IsAgent() && t.Agent.Executor == ExecutorHTTP) {
		return fmt.Sprintf("target:%d", t.ID)
	}
	return fmt.Sprintf("provider:%d", *t.ProviderID)
}

// Price is what a model costs in USD per million tokens; nil is unknown.
type Price struct {
	InputPerMTok  *float64 `json:"input_per_mtok" gorm:"column:input_per_mtok"`
	OutputPerMTok *float64 `json:"output_per_mtok" gorm:"column:output_per_mtok"`
}

// Cost is the USD cost of a call's tokens, or nil when the price is unknown.
func (p Price) Cost(promptTokens, completionTokens int64) *float64 {
	if p.InputPerMTok == nil || p.OutputPerMTok == nil {
		return nil
	}
	c := (float64(promptTokens)**p.InputPerMTok + float64(completionTokens)**p.OutputPerMTok) / 1e6
	return &c
}

// Label names the target for people: "provider / model", or the agent's
// name and version.
func (t RunTarget) Label() string {
	if t.AgentName != "" {
		return fmt.Sprintf("%s (agent v%d)", t.AgentName, t.AgentVersion)
	}
	return t.ProviderName + " / " + t.Model
}

// RunJudge is one judge model of a run.
type RunJudge struct {
	ID           int64          `json:"id"`
	RunID        int64          `json:"-"`
	Position     int            `json:"-"`
	Name         string         `json:"name"`
	ProviderID   *int64         `json:"provider_id"`
	ProviderName string         `json:"provider"`
	Model        string         `json:"model"`
	Settings     TargetSettings `json:"settings" gorm:"serializer:json"`

	JudgeID                *int64   `json:"judge_id"`
	JudgeVersion           int      `json:"judge_version"`
	PersonalityName        string   `json:"personality_name"`
	PersonalityDescription string   `json:"personality_description"`
	StyleID                *int64   `json:"style_id"`
	StyleName              string   `json:"style_name"`
	StyleVersion           int      `json:"style_version"`
	ScaleMin               int      `json:"scale_min"`
	ScaleMax               int      `json:"scale_max"`
	Metrics                []Metric `json:"metrics" gorm:"serializer:json"`
	PromptTemplate         string   `json:"-"`
	AsksViolations         bool     `json:"asks_violations"`
	Price
}

// Source is the scores' source name of this judge.
func (j RunJudge) Source() string { return fmt.Sprintf("judge:%d", j.ID) }

// RunTask is a run's frozen copy of a task.
type RunTask struct {
	ID                       int64
	RunID                    int64
	TaskID                   *int64
	TaskKey                  string
	Category                 string
	Subcategory              string
	Question                 string
	Excellent                string
	Good                     string
	Pass                     string
	IncorrectAnswerDirection string
	TaskFields
	// UseCaseFields is what the task's saved use case added to its prompts
	// when the run was created (empty without one).
	UseCaseFields prompt.UseCase `gorm:"column:usecase_fields;serializer:json"`
}

// AllTurns is the task's user turns: Turns, or the question alone.
func (t *RunTask) AllTurns() []string {
	if len(t.Turns) > 0 {
		return t.Turns
	}
	return []string{t.Question}
}

// SentPrompt is the first user message a run would send the task's model
// (package prompt), given what its use case adds (uc).
func (t *Task) SentPrompt(ctx context.Context, uc prompt.UseCase) (string, error) {
	pt := t.PromptTask(t.Question)
	pt.UseCase = uc
	return prompt.Build(ctx, pt)
}

// SentTurns are the user turns the model under test is sent: AllTurns with
// the first replaced by the prompt package prompt builds from the task and
// its frozen use case.
func (t *RunTask) SentTurns(ctx context.Context) ([]string, error) {
	pt := t.PromptTask(t.Question)
	pt.UseCase = t.UseCaseFields
	first, err := prompt.Build(ctx, pt)
	if err != nil {
		return nil, err
	}
	turns := slices.Clone(t.AllTurns())
	turns[0] = first
	return turns, nil
}

// JudgeUseCase is what the task's frozen use case tells its judges.
func (t *RunTask) JudgeUseCase() rubric.UseCase {
	u := t.UseCaseFields
	return rubric.UseCase{Goal: u.Goal, Constraints: u.ConstraintWords(), Notes: u.Notes}
}

// ItemStatus is the life of one (task, target) pair; see engine/doc.go.
type ItemStatus string

// Item statuses.
const (
	ItemNew             ItemStatus = "NEW"
	ItemInProgress      ItemStatus = "IN_PROGRESS"
	ItemWaitingForJudge ItemStatus = "WAITING_FOR_JUDGE"
	ItemJudging         ItemStatus = "JUDGING"
	ItemCompleted       ItemStatus = "COMPLETED"
	ItemFailed          ItemStatus = "FAILED"
)

// ItemStatuses lists every item status in lifecycle order.
var ItemStatuses = []ItemStatus{ItemNew, ItemInProgress, ItemWaitingForJudge, ItemJudging, ItemCompleted, ItemFailed}

// Item is the unit of work: one task asked of one target.
type Item struct {
	ID          int64
	RunID       int64
	RunTaskID   int64
	RunTargetID int64
	RepeatIndex int
	Status      ItemStatus
	WorkerID    string
	ClaimedAt   *time.Time
	LeaseUntil  *time.Time
	// Attempts counts claims, never reset: the claim token of result writes.
	Attempts int
	// AnswerAttempts and JudgeAttempts count the provider calls of each phase.
	AnswerAttempts   int
	JudgeAttempts    int
	Failures         int
	LastAttemptAt    *time.Time
	NextRetryAt      *time.Time
	Request          string
	Response         *string
	TimeMs           *int64
	PromptTokens     *int64
	CompletionTokens *int64
	TokensPerS       *float64
	Error            string
	FailedPhase      string
	SlotKey          string
	JudgePos         int
	Score            *float64
	CostUSD          *float64 `gorm:"column:cost_usd"`
	JudgeCostUSD     float64  `gorm:"column:judge_cost_usd"`
	// CostSource and JudgeCostSource say where the two costs came from.
	CostSource      CostSource
	JudgeCostSource CostSource
	Answers         *string
	// ToolCalls is an agent's trajectory as JSON (trajectory.Calls); Turns
	// counts its model calls; Reasoning is the reasoning text a provider
	// returned. All nil for a model target.
	ToolCalls *string
	Turns     *int
	Reasoning *string
	UpdatedAt time.Time
}

// Score is one metric value for an item from one source (a judge or a check).
type Score struct {
	ID     int64
	RunID  int64
	ItemID int64
	// RunTargetID is the scored item's target, copied from it as the score
	// is written, so that statistics by model read the scores alone.
	RunTargetID int64
	RunJudgeID  *int64
	Source      string
	Metric      string
	Score       float64
	Reasoning   string
	Raw         string
	// Note, on a verdict's overall row, says what of the judge's violations
	// list could not be read.
	Note      string
	CreatedAt time.Time
}

// Violation is one violation a judge listed in its verdict on an item.
type Violation struct {
	ID         int64     `json:"-"`
	RunID      int64     `json:"-"`
	ItemID     int64     `json:"-"`
	RunJudgeID int64     `json:"run_judge_id"`
	Category   string    `json:"category"`
	Detail     string    `json:"detail"`
	CreatedAt  time.Time `json:"-"`
}

// LogLevel grades a run log entry.
type LogLevel string

// Log levels.
const (
	LogInfo  LogLevel = "INFO"
	LogWarn  LogLevel = "WARN"
	LogError LogLevel = "ERROR"
)

// RunLog is one entry of a run's append-only live log.
type RunLog struct {
	ID        int64     `json:"id"`
	RunID     int64     `json:"run_id"`
	ItemID    *int64    `json:"item_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Level     LogLevel  `json:"level"`
	Kind      string    `json:"kind"`
	Message   string    `json:"message"`
	Detail    string    `json:"detail,omitempty"`
}

// Metric is one scoring dimension of a judgement style.
type Metric = rubric.Metric

// JudgementStyle is a style at one version: its scale, metrics and prompt.
type JudgementStyle struct {
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	Version        int       `json:"version"`
	VersionID      int64     `json:"version_id"`
	Builtin        bool      `json:"builtin"`
	ScaleMin       int       `json:"scale_min"`
	ScaleMax       int       `json:"scale_max"`
	Metrics        []Metric  `json:"metrics"`
	PromptTemplate string    `json:"prompt_template"`
	AsksViolations bool      `json:"asks_violations"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Judge is a judge model with a personality and a judgement style.
type Judge struct {
	ID                     int64          `json:"id"`
	Name                   string         `json:"name"`
	ProviderID             *int64         `json:"provider_id"`
	Model                  string         `json:"model"`
	PersonalityName        string         `json:"personality_name"`
	PersonalityDescription string         `json:"personality_description"`
	StyleID                int64          `json:"style_id"`
	Settings               TargetSettings `json:"settings" gorm:"serializer:json"`
	Version                int            `json:"version"`
	CreatedAt              time.Time      `json:"created_at"`
	UpdatedAt              time.Time      `json:"updated_at"`
}

// TargetSettings are generation settings of a model's calls.
type TargetSettings struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	MaxTokens       *int64   `json:"max_tokens,omitempty"`
	SystemPrompt    string   `json:"system_prompt,omitempty"`
	ReasoningEffort string   `json:"reasoning_effort,omitempty"`
}

// RunOptions are a run's choices beyond its models and tasks.
type RunOptions struct {
	// Metrics lists the judge metrics and checks ("check_<type>") that are on; empty = all.
	Metrics []string `json:"metrics,omitempty"`
	// Weights of the overall score per metric name; missing = 1.
	Weights map[string]float64 `json:"weights,omitempty"`
	// SourceWeights weigh whole sources in an item's overall: "judge" and "check:<type>"; missing = 1.
	SourceWeights map[string]float64 `json:"source_weights,omitempty"`
	// SystemPrompt applies to every task that has none of its own.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Pairwise judges answers in pairs (engine/pairwise.go) instead of one by one.
	Pairwise bool `json:"pairwise,omitempty"`
	// Pipeline judges each item as soon as its answer exists (pairwise: a
	// task's comparisons once all its targets answered) while other groups
	// still answer, instead of judging after benchmarking.
	Pipeline bool `json:"pipeline,omitempty"`
	// UseCases and Categories are where the run drew tasks from beside its
	// collections (the tasks themselves are frozen in run_tasks).
	UseCases   []string      `json:"usecases,omitempty"`
	Categories []CategoryRef `json:"categories,omitempty"`
	// MaxCostUSD is the budget (USD) the engine pauses the run at; nil = none.
	// Unlike the other options it may be raised while the run is active.
	MaxCostUSD *float64 `json:"max_cost_usd,omitempty"`
}

// MetricOn reports whether the run scores metric name.
func (o RunOptions) MetricOn(name string) bool {
	if len(o.Metrics) == 0 || name == "score" {
		return true
	}
	for _, m := range o.Metrics {
		if m == name {
			return true
		}
	}
	return false
}

// Grade values a human can give an item.
const (
	GradeCorrect = "correct"
	GradePartial = "partial"
	GradeWrong   = "wrong"
)

// Grade is a human's verdict on an item.
type Grade struct {
	ItemID    int64     `json:"item_id" gorm:"primaryKey;autoIncrement:false"`
	RunID     int64     `json:"run_id"`
	Grade     string    `json:"grade"`
	Notes     string    `json:"notes"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ProviderPrice is a model's price at a provider.
type ProviderPrice struct {
	ProviderID    int64   `json:"-" gorm:"primaryKey;autoIncrement:false"`
	Model         string  `json:"model" gorm:"primaryKey"`
	InputPerMTok  float64 `json:"input_per_mtok" gorm:"column:input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok" gorm:"column:output_per_mtok"`
	Source        string  `json:"source"`
}
