package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) showUseCases(c echo.Context) error {
	form := views.UseCaseForm{Input: store.UseCaseInput{Name: c.QueryParam("name")}}
	return h.renderUseCases(c, http.StatusOK, form, "")
}

func (h *Handler) renderUseCases(c echo.Context, status int, form views.UseCaseForm, uploadError string) error {
	ucs, err := h.store.UseCases(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, status, views.UseCasesPage(ucs, form, uploadError))
}

// useCaseForm reads the form: constraints as key = value lines (true/false
// and numbers typed as such), candidate models one a line.
func useCaseForm(c echo.Context) (store.UseCaseInput, views.UseCaseForm, error) {
	form := views.UseCaseForm{Constraints: c.FormValue("constraints"), Candidates: c.FormValue("default_candidate_models")}
	in := store.UseCaseInput{Name: c.FormValue("name"), Goal: c.FormValue("goal"), Description: c.FormValue("description"),
		Notes: c.FormValue("notes"), DefaultJudgeModel: c.FormValue("default_judge_model"), CostPriority: c.FormValue("cost_priority"),
		DefaultCandidateModels: strings.Split(form.Candidates, "\n"), Constraints: map[string]any{}}
	form.Input = in
	if v := strings.TrimSpace(c.FormValue("context_needed_tokens")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return in, form, &store.ValidationError{Field: "context_needed_tokens", Message: "must be a whole number of tokens"}
		}
		in.ContextNeededTokens = n
	}
	for i, line := range strings.Split(form.Constraints, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return in, form, &store.ValidationError{Field: "constraints", Message: fmt.Sprintf("line %d: write key = value", i+1)}
		}
		if _, dup := in.Constraints[k]; dup {
			return in, form, &store.ValidationError{Field: "constraints", Message: fmt.Sprintf("line %d: %s is given twice", i+1, k)}
		}
		if v == "true" || v == "false" {
			in.Constraints[k] = v == "true"
		} else if f, err := strconv.ParseFloat(v, 64); err == nil {
			in.Constraints[k] = f
		} else {
			in.Constraints[k] = v
		}
	}
	form.Input = in
	return in, form, nil
}

func (h *Handler) createUseCasePage(c echo.Context) error {
	in, form, err := useCaseForm(c)
	if err == nil {
		_, err = h.store.CreateUseCase(withoutCancel(c), in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			form.Error = msg
			return h.renderUseCases(c, status, form, "")
		}
		return err
	}
	return redirectFlash(c, "Use case saved.", "/usecases")
}

func (h *Handler) editUseCasePage(c echo.Context) error {
	id, err := pathID(c, "usecase")
	if err != nil {
		return err
	}
	uc, err := h.store.UseCase(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.UseCaseEditPage(views.UseCaseFormOf(uc)))
}

func (h *Handler) updateUseCasePage(c echo.Context) error {
	id, err := pathID(c, "usecase")
	if err != nil {
		return err
	}
	in, form, err := useCaseForm(c)
	form.ID = id
	if err == nil {
		_, err = h.store.UpdateUseCase(withoutCancel(c), id, in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			form.Error = msg
			return render(c, status, views.UseCaseEditPage(form))
		}
		return err
	}
	return redirectFlash(c, "Use case saved.", "/usecases")
}

func (h *Handler) deleteUseCasePage(c echo.Context) error {
	id, err := pathID(c, "usecase")
	if err != nil {
		return err
	}
	if err := h.store.DeleteUseCase(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Use case deleted; its tasks keep naming it.", "/usecases")
}

// importUseCasePage saves an uploaded use-case file, or re-shows the page
// with every problem of the file.
func (h *Handler) importUseCasePage(c echo.Context) error {
	u, err := readUpload(c)
	var uc *store.UseCase
	var created bool
	if err == nil {
		uc, created, err = h.importUseCase(c, u)
	}
	if err != nil {
		var ip *importProblems
		if errors.As(err, &ip) {
			return h.renderUseCases(c, http.StatusUnprocessableEntity, views.UseCaseForm{}, ip.Error()+": "+ip.errs.Error())
		}
		if status, msg, ok := formProblem(err); ok {
			return h.renderUseCases(c, status, views.UseCaseForm{}, msg)
		}
		return err
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	return redirectFlash(c, fmt.Sprintf("Use case %q %s.", uc.Name, verb), "/usecases")
}
