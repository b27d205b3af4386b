// Runs in the page's head, before the first paint: marks that JavaScript
// runs (the .js class: the narrow-screen menu folds only then), and applies
// the theme kept per browser, so a dark theme never flashes light (app.js
// switches it).
(function () {
  var d = document.documentElement;
  d.classList.add("js");
  var t = localStorage.getItem("tribunal-theme");
  if (t) d.setAttribute("data-theme", t);
})();
