package handlers

import (
	"cmp"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

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
// answer, with the engine's own code: rubric.Parse, rubric.Render (bounded
// in size and time) and rubric.SystemPrompt. Problems show in the preview.
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
	tmpl, err := rubric.Parse(ctx, cmp.Or(in.PromptTemplate, rubric.DefaultTemplate))
	if err == nil {
		turns := task.Turns
		if len(turns) == 0 {
			turns = []string{task.Question}
		}
		// The sample answers the last turn; earlier turns get a placeholder.
		answers := make([]string, len(turns))
		for i := range answers {
			answers[i] = "(the model's answer to turn " + strconv.Itoa(i+1) + ")"
		}
		answers[len(answers)-1] = v.Answer
		v.Prompt, err = rubric.Render(ctx, tmpl, rubric.Input{Question: task.Question, Turns: turns, Answers: answers, Response: v.Answer,
			Reference: task.Reference, Excellent: task.Excellent, Good: task.Good, Pass: task.Pass,
			IncorrectAnswerDirection: task.IncorrectAnswerDirection, Constraints: task.Constraints,
			JudgeInstructions: task.JudgeInstructions, Metrics: metrics, ScaleMin: in.ScaleMin, ScaleMax: in.ScaleMax})
	}
	if err != nil {
		v.Error = err.Error()
		return render(c, http.StatusOK, views.StylePreviewView(v))
	}
	v.System = rubric.SystemPrompt("", "", metrics, in.ScaleMin, in.ScaleMax)
	return render(c, http.StatusOK, views.StylePreviewView(v))
}
