package handlers

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"tribunal/engine"
	"tribunal/rubric"
	"tribunal/store"
	"tribunal/views"
)

// previewTasks is how many tasks the preview offers to render on.
const previewTasks = 100

// maxSampleAnswer bounds the sample answer a preview renders (bytes).
const maxSampleAnswer = 20_000

// sampleTask stands in when no task exists yet.
var sampleTask = store.Task{TaskKey: "sample", Category: "sample", Question: "What is the capital of France?",
	TaskFields: store.TaskFields{Reference: "Paris."}}

// previewStylePage (POST /styles/preview) renders the prompt a judge of the
// style being edited would get for a chosen task (or the first) and a sample
// answer, with the engine's own code (engine.JudgePrompt: the template
// rendered within its size and time bounds). Problems show in the preview.
func (h *Handler) previewStylePage(c echo.Context) error {
	ctx := c.Request().Context()
	_, in, formErr := styleForm(c)
	v := views.StylePreview{TaskKey: c.FormValue("preview_task"), Answer: c.FormValue("sample_answer")}
	if v.Answer == "" {
		v.Answer = views.SampleAnswer
	}
	if len(v.Answer) > maxSampleAnswer {
		v.Answer = v.Answer[:maxSampleAnswer]
	}
	tasks, err := h.store.Tasks(ctx, store.TaskFilter{PerPage: previewTasks})
	if err != nil {
		return err
	}
	task := sampleTask
	if len(tasks.Items) > 0 {
		task = tasks.Items[0]
	}
	for _, t := range tasks.Items {
		v.Tasks = append(v.Tasks, t.TaskKey)
		if t.TaskKey == v.TaskKey {
			task = t
		}
	}
	v.TaskKey = task.TaskKey
	if formErr != nil {
		v.Error = formErr.Error()
		return render(c, http.StatusOK, views.StylePreviewView(v))
	}
	// As the engine judges: an empty template is the default, a style
	// without metrics scores one overall.
	metrics := in.Metrics
	if len(metrics) == 0 {
		metrics = []store.Metric{{Name: rubric.Overall, Weight: 1}}
	}
	if err := rubric.ValidateMetrics(metrics, in.ScaleMin, in.ScaleMax); err != nil {
		v.Error = err.Error()
		return render(c, http.StatusOK, views.StylePreviewView(v))
	}
	// The judge and the item as a run would freeze them, through the
	// engine's own prompt building.
	judge := store.RunJudge{ScaleMin: in.ScaleMin, ScaleMax: in.ScaleMax, Metrics: metrics, PromptTemplate: in.PromptTemplate,
		AsksViolations: in.AsksViolations}
	uc, err := h.store.PromptUseCaseOf(ctx, task.UseCase)
	if err != nil {
		return err
	}
	item := &store.WorkItem{Task: store.RunTask{TaskKey: task.TaskKey, Question: task.Question, Excellent: task.Excellent, Good: task.Good,
		Pass: task.Pass, IncorrectAnswerDirection: task.IncorrectAnswerDirection, TaskFields: task.TaskFields, UseCaseFields: uc}}
	// The sample answers the last turn; earlier turns get a placeholder.
	answers := make([]string, len(item.Task.AllTurns()))
	for i := range answers {
		answers[i] = "(the model's answer to turn " + strconv.Itoa(i+1) + ")"
	}
	answers[len(answers)-1] = v.Answer
	encoded, err := json.Marshal(answers)
	if err != nil {
		return err
	}
	item.Response, item.Answers = &v.Answer, new(string(encoded))
	msgs, err := engine.JudgePrompt(ctx, judge, store.RunOptions{}, item)
	if err != nil {
		v.Error = err.Error()
		return render(c, http.StatusOK, views.StylePreviewView(v))
	}
	v.System, v.Prompt = msgs[0].Content, msgs[1].Content
	return render(c, http.StatusOK, views.StylePreviewView(v))
}
