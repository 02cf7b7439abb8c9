// reme memory viewer: confirmations before a change (served from this server only; no inline script)
"use strict";
document.addEventListener("submit", function (ev) {
  var form = ev.target;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) ev.preventDefault();
});
