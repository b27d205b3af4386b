// Tribunal's page behaviour, kept out of the markup so that the
// Content-Security-Policy refuses every inline script and handler: the
// elements say what they do with data- attributes, and these listeners on
// the document act for them, including on parts HTMX swaps in later.
(function () {
  "use strict";

  var toggles = {
    // The light/dark switch, kept per browser (theme.js applies it early).
    theme: function () {
      var d = document.documentElement;
      var now = d.getAttribute("data-theme") ||
        (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
      var next = now === "dark" ? "light" : "dark";
      d.setAttribute("data-theme", next);
      localStorage.setItem("tribunal-theme", next);
    },
    // Narrow screens fold the navigation's links behind a button.
    menu: function (button) {
      var open = button.closest("nav").classList.toggle("open");
      button.setAttribute("aria-expanded", open);
    },
  };

  // pickTasks makes the run form's task choice "these tasks" once one is
  // ticked.
  function pickTasks() {
    var mode = document.querySelector("[data-testid=task-mode-pick]");
    if (mode) mode.checked = true;
  }

  document.addEventListener("click", function (e) {
    var el = e.target.closest("[data-toggle], [data-remove], [data-check-all]");
    if (el && el.hasAttribute("data-toggle")) {
      toggles[el.getAttribute("data-toggle")](el);
    } else if (el && el.hasAttribute("data-remove")) {
      // A row's ✕ removes the row: data-remove is the row's selector.
      el.closest(el.getAttribute("data-remove")).remove();
    } else if (el) {
      // Select all / none of the task picker's boxes.
      var on = el.getAttribute("data-check-all") === "true";
      el.closest("[data-testid=task-pick-items]").querySelectorAll("input[type=checkbox]").forEach(function (c) {
        c.checked = on;
      });
      if (on) pickTasks();
    }
  });

  // A click on an item row opens the item (the task cell is its link).
  document.addEventListener("click", function (e) {
    var row = e.target.closest("tr[data-href]");
    if (!row || e.target.closest("a, button, summary, input, select") || String(window.getSelection())) return;
    if (e.ctrlKey || e.metaKey) window.open(row.dataset.href);
    else window.location.href = row.dataset.href;
  });

  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.matches("select[data-submit-on-change]")) t.form.requestSubmit();
    else if (t.matches("input[data-picks-task]")) pickTasks();
  });

  // A personality preset fills the description, unless one is written.
  document.addEventListener("input", function (e) {
    var t = e.target;
    if (!t.matches("input[data-fills-description]")) return;
    var preset = Array.prototype.find.call(t.list.options, function (o) { return o.value === t.value; });
    var d = t.form.elements.personality_description;
    if (preset && !d.value.trim()) d.value = preset.dataset.description;
  });

  // Each new model picker gets an index never used before on the page, even
  // after removals: the button counts on from data-next-index.
  document.addEventListener("htmx:configRequest", function (e) {
    var el = e.detail.elt;
    if (!el.hasAttribute("data-next-index")) return;
    var i = Number(el.getAttribute("data-next-index"));
    e.detail.parameters.i = String(i);
    el.setAttribute("data-next-index", String(i + 1));
  });

  // Inside [data-swap-errors], HTMX swaps in the answers to refused
  // requests: a panel shown again with its problem (422), or an error the
  // server retargeted to #flash. HTMX 2 drops 4xx and 5xx replies otherwise.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var d = e.detail;
    if (!d.isError || !e.target.closest("[data-swap-errors]")) return;
    if (d.xhr.status === 422 || d.xhr.getResponseHeader("HX-Retarget")) {
      d.shouldSwap = true;
      d.isError = false;
    }
  });

  // Keep the live log short and scrolled to the newest entry.
  document.addEventListener("htmx:sseMessage", function () {
    var log = document.getElementById("live-log");
    if (!log) return;
    while (log.children.length > 500) log.removeChild(log.firstElementChild);
    log.scrollTop = log.scrollHeight;
  });

  // Grading keys: they act only when no text field has the focus, so typing
  // notes never grades; one grade at a time.
  var grades = { c: "correct", "1": "correct", p: "partial", "2": "partial", w: "wrong", "3": "wrong" };
  var moves = { j: "next-item", ArrowRight: "next-item", k: "prev-item", ArrowLeft: "prev-item" };
  document.addEventListener("keydown", function (e) {
    var panel = document.getElementById("grading");
    if (!panel || e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    var t = e.target;
    if (t.isContentEditable || t.tagName === "TEXTAREA" || t.tagName === "SELECT" ||
      (t.tagName === "INPUT" && !/^(checkbox|radio|button|submit|reset)$/.test(t.type))) {
      if (e.key === "Escape") t.blur();
      return;
    }
    if (panel.querySelector("#grade-form.htmx-request")) return;
    var el = null;
    if (grades[e.key]) el = panel.querySelector('button[data-grade="' + grades[e.key] + '"]');
    else if (moves[e.key]) el = panel.querySelector("a[data-testid=" + moves[e.key] + "]");
    else if (e.key === "n") el = panel.querySelector("#grade-notes");
    if (!el) return;
    e.preventDefault();
    if (el.tagName === "TEXTAREA") el.focus(); else el.click();
  });
})();
