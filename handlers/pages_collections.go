package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) showCollections(c echo.Context) error {
	return h.renderCollections(c, http.StatusOK, views.CollectionForm{})
}

func (h *Handler) renderCollections(c echo.Context, status int, form views.CollectionForm) error {
	form.Filter = c.QueryParam("tag")
	cs, err := h.store.CollectionsTagged(c.Request().Context(), form.Filter)
	if err != nil {
		return err
	}
	if form.AllTags, err = h.store.AllTags(c.Request().Context()); err != nil {
		return err
	}
	return render(c, status, views.CollectionsPage(cs, form))
}

func (h *Handler) createCollection(c echo.Context) error {
	tags := store.ParseTags(c.FormValue("tags"))
	in := store.CollectionInput{Name: c.FormValue("name"), Description: c.FormValue("description"), Tags: &tags}
	col, err := h.store.CreateCollection(withoutCancel(c), in)
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderCollections(c, status, views.CollectionForm{Name: in.Name, Desc: in.Description, Tags: c.FormValue("tags"), Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Collection created.", fmt.Sprintf("/collections/%d", col.ID))
}

// pickerFilter is the task picker's search and category; "Add all matching"
// posts the same two fields.
func pickerFilter(c echo.Context) store.TaskFilter {
	return store.TaskFilter{Query: c.FormValue("q"), Category: c.FormValue("category")}
}

func (h *Handler) taskPicker(c echo.Context, id int64) (views.TaskPicker, error) {
	page, err := queryInt(c, "page")
	if err != nil {
		return views.TaskPicker{}, err
	}
	f := store.TaskFilter{Query: c.QueryParam("q"), Category: c.QueryParam("category"), Page: page, PerPage: 50}
	tasks, err := h.store.Tasks(c.Request().Context(), f)
	if err != nil {
		return views.TaskPicker{}, err
	}
	ids := make([]int64, len(tasks.Items))
	for i, t := range tasks.Items {
		ids[i] = t.ID
	}
	member, err := h.store.CollectionMembers(c.Request().Context(), id, ids)
	if err != nil {
		return views.TaskPicker{}, err
	}
	cats, err := h.store.TaskCategories(c.Request().Context())
	if err != nil {
		return views.TaskPicker{}, err
	}
	return views.TaskPicker{CollectionID: id, Query: f.Query, Category: f.Category, Categories: cats, Page: tasks, Member: member}, nil
}

// addMatchingTasks adds every task the picker's current search and category
// match, and comes back to the picker as it was.
func (h *Handler) addMatchingTasks(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	f := pickerFilter(c)
	n, err := h.store.AddMatchingTasks(withoutCancel(c), id, f)
	if err != nil {
		return err
	}
	msg := "Added " + plural(int(n), "task") + " to the collection."
	if n == 0 {
		msg = "Every matching task was in the collection already."
	}
	back := url.Values{}
	if f.Query != "" {
		back.Set("q", f.Query)
	}
	if f.Category != "" {
		back.Set("category", f.Category)
	}
	to := fmt.Sprintf("/collections/%d", id)
	if len(back) > 0 {
		to += "?" + back.Encode()
	}
	return redirectFlash(c, msg, to)
}

func (h *Handler) showCollection(c echo.Context) error {
	return h.renderCollection(c, http.StatusOK, "")
}

func (h *Handler) renderCollection(c echo.Context, status int, formErr string) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	col, err := h.store.Collection(c.Request().Context(), id)
	if err != nil {
		return err
	}
	picker, err := h.taskPicker(c, id)
	if err != nil {
		return err
	}
	form := views.CollectionForm{ID: id, Name: col.Name, Desc: col.Description, Error: formErr, Tags: strings.Join(col.Tags, ", ")}
	if formErr != "" {
		form.Name, form.Desc, form.Tags = c.FormValue("name"), c.FormValue("description"), c.FormValue("tags")
	}
	return render(c, status, views.CollectionPage(col, form, picker))
}

func (h *Handler) collectionPicker(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	picker, err := h.taskPicker(c, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.TaskPickerView(picker))
}

func (h *Handler) renameCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	in := store.CollectionInput{Name: c.FormValue("name"), Description: c.FormValue("description")}
	if form, _ := c.FormParams(); form.Has("tags") {
		tags := store.ParseTags(form.Get("tags"))
		in.Tags = &tags
	}
	if _, err := h.store.UpdateCollection(withoutCancel(c), id, in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderCollection(c, status, msg)
		}
		return err
	}
	return redirectFlash(c, "Collection saved.", fmt.Sprintf("/collections/%d", id))
}

// toggleCollectionTask adds the task when its checkbox is ticked (the form
// carries member=1) and removes it otherwise; it answers the new count and
// a success flash.
func (h *Handler) toggleCollectionTask(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	taskID, err := pathID(c, "task")
	if err != nil {
		return err
	}
	ref := []store.TaskRef{{ID: taskID}}
	var col *store.CollectionDetail
	msg := "Task added to the collection."
	if c.FormValue("member") != "" {
		col, err = h.store.PatchCollectionTasks(withoutCancel(c), id, ref, nil)
	} else {
		col, err = h.store.PatchCollectionTasks(withoutCancel(c), id, nil, ref)
		msg = "Task removed from the collection."
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.CollectionToggled(col.ID, col.TaskCount, msg))
}

func (h *Handler) deleteCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	if err := h.store.DeleteCollection(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Collection deleted.", "/collections")
}
