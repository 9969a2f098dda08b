/* Progressive enhancement for every page; each page works without it.
   - [data-copy]: a button that copies the text of the element it names to the clipboard.
   - form[data-busy]: disables the submit button while the request runs (no double submits). */
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
})();
