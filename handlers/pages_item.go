package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

// itemDetail reads the item of the path and the items-table filter of the
// query, and assembles the item's detail within that filter.
func (h *Handler) itemDetail(c echo.Context) (*runs.ItemDetail, store.ItemFilter, error) {
	id, err := pathID(c, "item")
	if err != nil {
		return nil, store.ItemFilter{}, err
	}
	f, err := h.itemFilter(c)
	if err != nil {
		return nil, f, err
	}
	d, err := h.runs.Item(c.Request().Context(), id, f)
	return d, f, err
}

func itemPage(d *runs.ItemDetail, f store.ItemFilter) views.ItemPageData {
	return views.ItemPageData{Item: d, Filter: viewFilter(f)}
}

// viewFilter is the items-table filter as the pages carry it in links.
func viewFilter(f store.ItemFilter) views.ItemFilter {
	return views.ItemFilter{Status: string(f.Status), Model: f.Model, Phase: string(f.Phase), Reason: f.Reason, Violation: f.Violation}
}

// showItem is an item's page: everything about it, within the filter of
// the items table it was opened from.
func (h *Handler) showItem(c echo.Context) error {
	d, f, err := h.itemDetail(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ItemPage(itemPage(d, f)))
}

// gradeItemDetail grades an item from its page: the grade form comes back
// (HTMX) or the page is shown again.
func (h *Handler) gradeItemDetail(c echo.Context) error {
	id, err := pathID(c, "item")
	if err != nil {
		return err
	}
	// The filter (of the links back) is checked before anything is saved.
	f, err := h.itemFilter(c)
	if err != nil {
		return err
	}
	in := store.GradeInput{Grade: c.FormValue("grade"), Notes: c.FormValue("notes")}
	_, gerr := h.store.SetGrade(withoutCancel(c), id, in)
	status, msg, refused := formProblem(gerr)
	if gerr != nil && !refused {
		return gerr
	}
	if gerr == nil && !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, viewFilter(f).ItemURL(id))
	}
	d, f, err := h.itemDetail(c)
	if err != nil {
		return err
	}
	v := itemPage(d, f)
	if refused {
		v.GradeError, v.Notes = msg, in.Notes
	} else {
		status, v.GradeSaved = http.StatusOK, true
	}
	if isHTMX(c) {
		return render(c, status, views.ItemGradeForm(v))
	}
	return render(c, status, views.ItemPage(v))
}

func (h *Handler) apiGetItem(c echo.Context) error {
	d, _, err := h.itemDetail(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}
