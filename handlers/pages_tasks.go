package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) tasksList(c echo.Context) (views.TasksList, error) {
	f, err := h.taskFilter(c)
	if err != nil {
		return views.TasksList{}, err
	}
	page, err := h.store.Tasks(c.Request().Context(), f)
	if err != nil {
		return views.TasksList{}, err
	}
	cats, err := h.store.TaskCategories(c.Request().Context())
	if err != nil {
		return views.TasksList{}, err
	}
	tags, err := h.store.AllTags(c.Request().Context())
	if err != nil {
		return views.TasksList{}, err
	}
	ucs, err := h.store.UseCases(c.Request().Context())
	if err != nil {
		return views.TasksList{}, err
	}
	var names []string
	for _, uc := range ucs {
		if uc.Name != "" {
			names = append(names, uc.Name)
		}
	}
	return views.TasksList{Query: f.Query, Category: f.Category, Categories: cats, Page: page, Tag: f.Tag, Tags: tags,
		UseCase: f.UseCase, UseCases: names}, nil
}

func (h *Handler) showTasks(c echo.Context) error {
	return h.renderTasks(c, http.StatusOK, views.TaskForm{})
}

func (h *Handler) renderTasks(c echo.Context, status int, form views.TaskForm) error {
	l, err := h.tasksList(c)
	if err != nil {
		return err
	}
	return render(c, status, views.TasksPage(l, form))
}

func taskForm(c echo.Context) store.TaskInput {
	in := store.TaskInput{TaskKey: c.FormValue("task_id"), Category: c.FormValue("category"),
		Subcategory: c.FormValue("subcategory"), Question: c.FormValue("question"), Excellent: c.FormValue("excellent"),
		Good: c.FormValue("good"), Pass: c.FormValue("pass"), IncorrectAnswerDirection: c.FormValue("incorrect_answer_direction"),
		Reference: c.FormValue("reference"), SystemPrompt: c.FormValue("system_prompt"), UseCase: c.FormValue("usecase"),
		Constraints: c.FormValue("constraints"), Examples: c.FormValue("examples"), JudgeInstructions: c.FormValue("judge_instructions"),
		Comments: c.FormValue("comments"), Input: c.FormValue("input"), PromptTemplate: c.FormValue("prompt_template"), Tags: strings.FieldsFunc(c.FormValue("tags"), func(r rune) bool { return r == ',' || r == ';' })}
	if follow := views.SplitTurns(c.FormValue("follow_ups")); len(follow) > 0 {
		in.Turns = append([]string{in.Question}, follow...)
	}
	form, _ := c.FormParams()
	for _, typ := range form["check"] {
		in.Checks = append(in.Checks, store.Check{Type: typ, Value: c.FormValue("check_value_" + typ)})
	}
	return in
}

func (h *Handler) createTask(c echo.Context) error {
	in := taskForm(c)
	if _, err := h.store.CreateTask(withoutCancel(c), in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderTasks(c, status, views.TaskForm{Input: in, Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Task created.", "/tasks")
}

func (h *Handler) editTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	t, err := h.store.Task(c.Request().Context(), id)
	if err != nil {
		return err
	}
	form := views.TaskForm{ID: id, Input: t.Input()}
	uc, err := h.store.PromptUseCaseOf(c.Request().Context(), t.UseCase)
	if err != nil {
		return err
	}
	if form.Prompt, err = t.SentPrompt(c.Request().Context(), uc); err != nil {
		form.PromptError = err.Error()
	}
	return render(c, http.StatusOK, views.TaskEditPage(form))
}

func (h *Handler) updateTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	in := taskForm(c)
	if _, err := h.store.UpdateTask(withoutCancel(c), id, in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return render(c, status, views.TaskEditPage(views.TaskForm{ID: id, Input: in, Error: msg}))
		}
		return err
	}
	return redirectFlash(c, "Task saved.", "/tasks")
}

func (h *Handler) deleteTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	if err := h.store.DeleteTask(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Task deleted.", "/tasks")
}
