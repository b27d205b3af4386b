package views

import (
	"fmt"
	"strings"

	"tribunal/checks"
	"tribunal/rubric"
	"tribunal/store"
)

// The one vocabulary of the pages: every enum a page shows goes through one
// function here, so a value reads the same everywhere. Raw values stay in
// data-* attributes, titles, option values and the API.

// RunStatusWord is a run status in words: RUNNING → "Running".
func RunStatusWord(s store.RunStatus) string {
	switch s {
	case store.RunPending:
		return "Pending"
	case store.RunRunning:
		return "Running"
	case store.RunPaused:
		return "Paused"
	case store.RunFinished:
		return "Finished"
	case store.RunFailed:
		return "Failed"
	case store.RunCancelled:
		return "Cancelled"
	}
	return humanize(string(s))
}

// ItemStatusWord is an item status in words: WAITING_FOR_JUDGE → "Waiting for judge".
func ItemStatusWord(s store.ItemStatus) string {
	switch s {
	case store.ItemNew:
		return "New"
	case store.ItemInProgress:
		return "In progress"
	case store.ItemWaitingForJudge:
		return "Waiting for judge"
	case store.ItemJudging:
		return "Judging"
	case store.ItemCompleted:
		return "Completed"
	case store.ItemFailed:
		return "Failed"
	}
	return humanize(string(s))
}

// statusWord words a status badge's value, a run's or an item's (the two
// vocabularies share only FAILED, which reads the same in both).
func statusWord(s string) string {
	if isRunStatus(s) {
		return RunStatusWord(store.RunStatus(s))
	}
	return ItemStatusWord(store.ItemStatus(s))
}

func isRunStatus(s string) bool {
	switch store.RunStatus(s) {
	case store.RunPending, store.RunRunning, store.RunPaused, store.RunFinished, store.RunFailed, store.RunCancelled:
		return true
	}
	return false
}

// PhaseWord is a run's phase in words: JUDGING → "Judging".
func PhaseWord(p store.Phase) string {
	switch p {
	case store.PhaseBenchmarking:
		return "Answering"
	case store.PhaseJudging:
		return "Judging"
	}
	return humanize(string(p))
}

// ProviderTypeWord is a provider type in words: "OpenAI-compatible", not
// CUSTOM_OPEN_AI_COMPATIBLE.
func ProviderTypeWord(t store.ProviderType) string {
	switch t {
	case store.ProviderOpenAI:
		return "OpenAI"
	case store.ProviderOllama:
		return "Ollama"
	case store.ProviderLMStudio:
		return "LM Studio"
	case store.ProviderOpenRouter:
		return "OpenRouter"
	case store.ProviderCustom:
		return "OpenAI-compatible"
	}
	return humanize(string(t))
}

// CheckTypeWord is a reference check's type in words: rouge_l → "ROUGE-L".
func CheckTypeWord(typ string) string {
	switch typ {
	case checks.ExactMatch:
		return "Exact match"
	case checks.Contains:
		return "Contains"
	case checks.Regex:
		return "Regex"
	case checks.Numeric:
		return "Numeric"
	case checks.F1:
		return "F1"
	case checks.Precision:
		return "Precision"
	case checks.Recall:
		return "Recall"
	case checks.BLEU:
		return "BLEU"
	case checks.RougeL:
		return "ROUGE-L"
	case checks.JSONValid:
		return "Valid JSON"
	case checks.JSONSchema:
		return "JSON schema"
	case checks.ToolCalled:
		return "Tool called"
	case checks.ToolNotCalled:
		return "Tool not called"
	case checks.ToolArgs:
		return "Tool arguments"
	case checks.ToolSequence:
		return "Tool sequence"
	case checks.MaxToolCalls:
		return "Max tool calls"
	}
	return humanize(typ)
}

// ConditionWord is an alert condition as the words between the watched
// value and the threshold: LESS_THAN → "less than".
func ConditionWord(c string) string {
	switch c {
	case "LESS_THAN":
		return "less than"
	case "GREATER_THAN":
		return "greater than"
	case "EQUALS":
		return "equals"
	case "NOT_EQUALS":
		return "does not equal"
	case "PERCENTAGE_DROP":
		return "drops by more than … %"
	case "PERCENTAGE_RISE":
		return "rises by more than … %"
	case "ANOMALY_DETECTED":
		return "is an anomaly"
	}
	return strings.ToLower(humanize(c))
}

// conditionRule is an alert rule in words: "score less than 7",
// "score drops by more than 10 % vs the last 5 runs".
func conditionRule(subject, c, threshold string, baseline int) string {
	switch c {
	case "PERCENTAGE_DROP":
		return fmt.Sprintf("%s drops by more than %s %% vs the last %d runs", subject, threshold, baseline)
	case "PERCENTAGE_RISE":
		return fmt.Sprintf("%s rises by more than %s %% vs the last %d runs", subject, threshold, baseline)
	case "ANOMALY_DETECTED":
		return fmt.Sprintf("%s outside mean ± %s·sd of the last %d runs", subject, threshold, baseline)
	}
	return subject + " " + ConditionWord(c) + " " + threshold
}

// TriggerWord says what started a run or a schedule's firing.
func TriggerWord(t string) string {
	switch t {
	case "MANUAL":
		return "By hand"
	case "SCHEDULED":
		return "On schedule"
	case "API":
		return "API"
	case "CLI":
		return "Command line"
	case "CRON":
		return "On a cron schedule"
	case "WEBHOOK":
		return "Webhook"
	case "EVENT":
		return "On an event"
	}
	return humanize(t)
}

// EventWord says what an EVENT schedule listens for.
func EventWord(e string) string {
	switch e {
	case "import.finished":
		return "When an import finishes"
	case "run.finished":
		return "When a run finishes"
	}
	return e
}

// FiringStatusWord is how a schedule's firing went: SKIPPED → "Skipped".
func FiringStatusWord(s string) string {
	switch s {
	case store.FiringStarting:
		return "Starting"
	case store.FiringStarted:
		return "Started"
	case store.FiringWaiting:
		return "Waiting"
	case store.FiringSkipped:
		return "Skipped"
	case store.FiringError:
		return "Error"
	}
	return humanize(s)
}

// DeliveryStatusWord is how a notification's delivery went: SENT → "Sent".
func DeliveryStatusWord(s string) string {
	switch s {
	case store.DeliveryPending:
		return "Pending"
	case store.DeliverySending:
		return "Sending"
	case store.DeliverySent:
		return "Sent"
	case store.DeliveryFailed:
		return "Failed"
	}
	return humanize(s)
}

// SeverityWord is an alert's severity: CRITICAL → "Critical".
func SeverityWord(s string) string { return humanize(s) }

// ExecutorWord says who runs an agent: tools → "Tool loop (Tribunal)".
func ExecutorWord(e store.AgentExecutor) string {
	switch e {
	case store.ExecutorTools:
		return "Tool loop (Tribunal)"
	case store.ExecutorHTTP:
		return "Your endpoint (HTTP)"
	}
	return humanize(string(e))
}

// TransportWord is an MCP transport: streamable_http → "Streamable HTTP".
func TransportWord(t store.MCPTransport) string {
	switch t {
	case store.TransportStreamableHTTP:
		return "Streamable HTTP"
	case store.TransportSSE:
		return "SSE"
	case store.TransportStdio:
		return "Local command (stdio)"
	}
	return humanize(string(t))
}

// humanize is the fallback for a value the vocabulary does not know yet:
// SOME_VALUE → "Some value".
func humanize(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ToLower(strings.ReplaceAll(s, "_", " "))
	return strings.ToUpper(s[:1]) + s[1:]
}

// SourceTypeWord is a trace source's type in words.
func SourceTypeWord(t store.SourceType) string {
	switch t {
	case store.SourceLangfuse:
		return "Langfuse"
	}
	return string(t)
}

// CostPriorityWord is a use case's cost priority in words: low → "Low cost first".
func CostPriorityWord(p string) string {
	switch p {
	case store.CostLow:
		return "Low cost first"
	case store.CostBalanced:
		return "Balanced"
	case store.CostHigh:
		return "Quality first"
	}
	return humanize(p)
}

// ViolationWord is a violation category in words: under_min → "Below a minimum".
func ViolationWord(c string) string {
	switch c {
	case rubric.ViolationUnderMin:
		return "Below a minimum"
	case rubric.ViolationOverMax:
		return "Over a maximum"
	case rubric.ViolationFormat:
		return "Wrong format"
	case rubric.ViolationMissingField:
		return "Missing field"
	case rubric.ViolationOther:
		return "Other"
	}
	return humanize(c)
}

// CostSourceWord says where a cost came from: provider → "reported by
// provider"; "" (unknown) has no words.
func CostSourceWord(s store.CostSource) string {
	switch s {
	case store.CostProvider:
		return "reported by provider"
	case store.CostPriceTable:
		return "from prices"
	case store.CostMixed:
		return "partly reported, partly from prices"
	}
	return humanize(string(s))
}
