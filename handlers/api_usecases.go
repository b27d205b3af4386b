package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/importer"
	"tribunal/runfile"
	"tribunal/store"
)

// UseCaseImported answers a use-case file imported: the use case as saved,
// and whether it was new (201) or replaced the one of its name (200).
type UseCaseImported struct {
	Created bool          `json:"created"`
	UseCase store.UseCase `json:"usecase"`
}

func (h *Handler) apiGetUseCase(c echo.Context) error {
	id, err := pathID(c, "usecase")
	if err != nil {
		return err
	}
	uc, err := h.store.UseCase(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, uc)
}

func (h *Handler) apiCreateUseCase(c echo.Context) error {
	var in store.UseCaseInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	uc, err := h.store.CreateUseCase(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, uc)
}

func (h *Handler) apiUpdateUseCase(c echo.Context) error {
	id, err := pathID(c, "usecase")
	if err != nil {
		return err
	}
	var in store.UseCaseInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	uc, err := h.store.UpdateUseCase(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, uc)
}

func (h *Handler) apiDeleteUseCase(c echo.Context) error {
	id, err := pathID(c, "usecase")
	if err != nil {
		return err
	}
	if err := h.store.DeleteUseCase(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// apiImportUseCase is POST /api/usecases/import: a use-case file (YAML) as
// the body or the multipart field "file", saved by its name.
func (h *Handler) apiImportUseCase(c echo.Context) error {
	u, err := readUpload(c)
	if err != nil {
		return err
	}
	uc, created, err := h.importUseCase(c, u)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, UseCaseImported{Created: created, UseCase: *uc})
}

// importUseCase reads a use-case file and saves it by name; a bad file is
// an importProblems listing every problem with its line. ${VAR:-default}
// takes its default: the server's environment holds its secrets, which an
// uploaded file must not read back (tribunal import expands the user's own).
func (h *Handler) importUseCase(c echo.Context, u *upload) (*store.UseCase, bool, error) {
	noEnv := func(string) (string, bool) { return "", false }
	in, err := runfile.ParseUseCase(cmpOr(u.name, "usecase.yaml"), u.data, noEnv)
	if err != nil {
		var ps runfile.Problems
		if !errors.As(err, &ps) {
			return nil, false, err
		}
		errs := make(importer.Errors, len(ps))
		for i, p := range ps {
			errs[i] = importer.RowError{Line: p.Line, Field: p.Field, Message: p.Message}
		}
		return nil, false, &importProblems{name: u.name, errs: errs}
	}
	return h.store.SaveUseCase(withoutCancel(c), in)
}
