/* Progressive enhancement for every page; each page works without it.
   - [data-copy]: a button that copies the text of the element it names to the clipboard.
   - form[data-busy]: disables the submit button while the request runs (no double submits).
   - [data-refresh]: a panel that reloads itself from its URL every 10 s while the tab is visible. */
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) { return; }
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) { return; }
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute("data-busy")) { return; }
    var submit = form.querySelector("[type=submit]");
    if (submit) { submit.disabled = true; submit.setAttribute("aria-busy", "true"); }
  });
  function refresh(panel) {
    if (document.hidden) { return; }
    fetch(panel.getAttribute("data-refresh"), {headers: {"Accept": "text/html"}})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) { return; }
        var next = new DOMParser().parseFromString(html, "text/html").body.firstElementChild;
        if (next && next.id === panel.id) { panel.replaceWith(next); }
      })
      .catch(function () { /* keep the last good panel; try again next tick */ });
  }
  setInterval(function () {
    document.querySelectorAll("[data-refresh]").forEach(refresh);
  }, 10000);
})();
