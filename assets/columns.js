// Columns pickers (views.ColumnsPicker): a <details data-columns-picker="KEY">
// of checkboxes, each with data-col="COL", shows or hides the cells with the
// same data-col in table[data-columns="KEY"]. The choice is kept per browser
// in localStorage, so a reload or a live swap of the table keeps it. Without
// JS the picker stays hidden and the server's default columns show.
(function () {
  var prefix = "tribunal-columns:";
  // Which pickers are open, so a live swap of their table does not shut them.
  var open = {};

  function saved(key) {
    try {
      return JSON.parse(localStorage.getItem(prefix + key)) || {};
    } catch (e) {
      return {};
    }
  }

  function apply(picker) {
    var key = picker.getAttribute("data-columns-picker");
    var choice = saved(key);
    var tables = document.querySelectorAll('table[data-columns="' + key + '"]');
    picker.querySelectorAll("input[data-col]").forEach(function (box) {
      var col = box.getAttribute("data-col");
      if (Object.prototype.hasOwnProperty.call(choice, col)) box.checked = choice[col];
      tables.forEach(function (t) {
        t.querySelectorAll('[data-col="' + col + '"]').forEach(function (cell) {
          cell.hidden = !box.checked;
        });
      });
    });
    picker.hidden = false;
    if (open[key]) picker.open = true;
  }

  function init(root) {
    if (!root || !root.querySelectorAll) return;
    if (root.matches && root.matches("[data-columns-picker]")) apply(root);
    root.querySelectorAll("[data-columns-picker]").forEach(apply);
  }

  document.addEventListener("change", function (e) {
    var box = e.target;
    var picker = box.closest && box.closest("[data-columns-picker]");
    if (!picker || !box.hasAttribute("data-col")) return;
    var key = picker.getAttribute("data-columns-picker");
    var choice = saved(key);
    choice[box.getAttribute("data-col")] = box.checked;
    try {
      localStorage.setItem(prefix + key, JSON.stringify(choice));
    } catch (err) {
      // storage full or off: the choice holds for this page only
    }
    apply(picker);
  });
  // toggle does not bubble: listen while it goes down.
  document.addEventListener("toggle", function (e) {
    var picker = e.target;
    if (picker.hasAttribute && picker.hasAttribute("data-columns-picker")) {
      open[picker.getAttribute("data-columns-picker")] = picker.open;
    }
  }, true);
  document.addEventListener("DOMContentLoaded", function () {
    init(document);
  });
  // A live swap renders the server's defaults again: re-apply the choice.
  document.addEventListener("htmx:load", function (e) {
    init(e.target);
  });
})();
