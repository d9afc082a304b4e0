package dashboard

import (
	"net/http"
	"net/url"
)

// Actions that cannot be undone (delete, cancel, and every bulk action)
// ask first, without JavaScript: their button posts the action without
// the confirmed field, and the handler answers with a page that names the
// task or counts the tasks and repeats the form with confirmed=1. Only
// that second POST acts (and it passes the CSRF checks like the first).

// confirmData is the confirmation page.
type confirmData struct {
	Question string   // "Delete task 42?"
	Details  []string // what will happen
	Action   string   // the form's action, relative to the page
	Fields   url.Values
	Button   string // the confirming button's text
	Back     string // where "Keep it" leads
}

// confirmed reports whether the POST is the confirming one.
func confirmed(r *http.Request) bool { return r.PostFormValue("confirmed") == "1" }

// askConfirm renders the confirmation page.
func (h *Handler) askConfirm(w http.ResponseWriter, r *http.Request, d confirmData) {
	h.renderPage(w, r, http.StatusOK, "confirm", "Confirm", d, nil, false)
}
