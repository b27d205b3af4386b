package store

import "time"

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
	ID                    int64        `json:"id"`
	Name                  string       `json:"name"`
	Type                  ProviderType `json:"type"`
	BaseURL               string       `json:"base_url"`
	ModelsEndpoint        string       `json:"models_endpoint"`
	InferenceEndpoint     string       `json:"inference_endpoint"`
	Concurrency           int          `json:"concurrency"`
	RequestsPerMinute     int          `json:"requests_per_minute"`
	TimeoutSeconds        int          `json:"timeout_seconds"`
	ConnectTimeoutSeconds int          `json:"connect_timeout_seconds"`
	CreatedAt             time.Time    `json:"created_at"`
	UpdatedAt             time.Time    `json:"updated_at"`
	Headers               []Header     `json:"headers" gorm:"foreignKey:ProviderID"`
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
	ID                       int64     `json:"id"`
	TaskKey                  string    `json:"task_id"`
	Category                 string    `json:"category"`
	Subcategory              string    `json:"subcategory"`
	Question                 string    `json:"question"`
	Excellent                string    `json:"excellent"`
	Good                     string    `json:"good"`
	Pass                     string    `json:"pass"`
	IncorrectAnswerDirection string    `json:"incorrect_answer_direction"`
	CreatedAt                time.Time `json:"created_at"`
	UpdatedAt                time.Time `json:"updated_at"`
}

// Collection is a named set of tasks.
type Collection struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	TaskCount   int64     `json:"task_count" gorm:"->;-:migration"`
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

// Phase is the engine phase of a run.
type Phase string

// The two phases of seed 000: all benchmarking, then all judging.
const (
	PhaseBenchmarking Phase = "BENCHMARKING"
	PhaseJudging      Phase = "JUDGING"
)

// Run is one benchmark execution.
type Run struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	Status      RunStatus  `json:"status"`
	Phase       Phase      `json:"phase"`
	TriggeredBy string     `json:"triggered_by"`
	Error       string     `json:"error"`
	Snapshot    string     `json:"-"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`

	Targets     []RunTarget     `json:"targets" gorm:"foreignKey:RunID"`
	Judges      []RunJudge      `json:"judges" gorm:"foreignKey:RunID"`
	Collections []RunCollection `json:"collections" gorm:"foreignKey:RunID"`
}

// Active reports whether the run still has work ahead of it.
func (r *Run) Active() bool {
	return r.Status == RunPending || r.Status == RunRunning || r.Status == RunPaused
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
	ID           int64      `json:"id"`
	RunID        int64      `json:"-"`
	Position     int        `json:"-"`
	ProviderID   *int64     `json:"provider_id"`
	ProviderName string     `json:"provider"`
	Model        string     `json:"model"`
	Settings     string     `json:"-"`
	WarmupStatus string     `json:"warmup_status"`
	WarmupError  string     `json:"warmup_error,omitempty"`
	WarmupWorker string     `json:"-"`
	WarmupUntil  *time.Time `json:"-"`
}

// Label names the target for people: "provider / model".
func (t RunTarget) Label() string { return t.ProviderName + " / " + t.Model }

// RunJudge is one judge model of a run.
type RunJudge struct {
	ID           int64  `json:"id"`
	RunID        int64  `json:"-"`
	Position     int    `json:"-"`
	Name         string `json:"name"`
	ProviderID   *int64 `json:"provider_id"`
	ProviderName string `json:"provider"`
	Model        string `json:"model"`
	Settings     string `json:"-"`
}

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
	ID               int64
	RunID            int64
	RunTaskID        int64
	RunTargetID      int64
	RepeatIndex      int
	Status           ItemStatus
	WorkerID         string
	ClaimedAt        *time.Time
	LeaseUntil       *time.Time
	Attempts         int
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
	UpdatedAt        time.Time
}

// Score is one metric value for an item from one source (a judge or a check).
type Score struct {
	ID         int64
	RunID      int64
	ItemID     int64
	RunJudgeID *int64
	Source     string
	Metric     string
	Score      float64
	Reasoning  string
	Raw        string
	CreatedAt  time.Time
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
