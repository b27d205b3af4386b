package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) showSources(c echo.Context) error {
	return h.renderSources(c, http.StatusOK, views.SourceForm{Input: store.SourceInput{Type: store.SourceLangfuse}})
}

func (h *Handler) renderSources(c echo.Context, status int, form views.SourceForm) error {
	list, err := h.store.Sources(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, status, views.SourcesPage(list, form))
}

func sourceForm(c echo.Context) store.SourceInput {
	return store.SourceInput{Name: c.FormValue("name"), Type: store.SourceType(c.FormValue("type")), BaseURL: c.FormValue("base_url"),
		PublicKey: c.FormValue("public_key"), SecretKey: c.FormValue("secret_key"), Project: c.FormValue("project")}
}

func (h *Handler) createSourcePage(c echo.Context) error {
	in := sourceForm(c)
	if _, err := h.store.CreateSource(withoutCancel(c), in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderSources(c, status, views.SourceForm{Input: in, Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Source added.", "/sources")
}

func (h *Handler) editSourcePage(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	src, err := h.store.Source(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in := store.SourceInput{Name: src.Name, Type: src.Type, BaseURL: src.BaseURL, PublicKey: src.PublicKey, SecretKey: src.SecretKey, Project: src.Project}
	return render(c, http.StatusOK, views.SourceEditPage(views.SourceForm{ID: id, Input: in, StoredKey: src.SecretKey}))
}

func (h *Handler) updateSourcePage(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	in := sourceForm(c)
	if _, err := h.store.UpdateSource(withoutCancel(c), id, in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			form := views.SourceForm{ID: id, Input: in, Error: msg}
			if src, err := h.store.Source(c.Request().Context(), id); err == nil {
				form.StoredKey = src.SecretKey
			}
			return render(c, status, views.SourceEditPage(form))
		}
		return err
	}
	return redirectFlash(c, "Source saved.", "/sources")
}

func (h *Handler) deleteSourcePage(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	if err := h.store.DeleteSource(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Source deleted.", "/sources")
}

func (h *Handler) testSourcePage(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	res, err := h.testSource(c, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.SourceTestResult(views.SourceTest{OK: res.OK, Error: res.Error, LatencyMs: res.LatencyMs}))
}
