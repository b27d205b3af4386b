package handlers

import "github.com/labstack/echo/v4"

// evalPages registers the pages of judges, judgement styles and grading.
func (h *Handler) evalPages(e *echo.Echo) {}
