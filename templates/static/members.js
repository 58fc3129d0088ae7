// The members' forms: a form marked data-once disables its buttons once it is sent, so a
// second click sends nothing (the services refuse a repeated action anyway: e.g. a
// tournament is started once, whatever the clicks).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-once")) return;
  // A form that htmx sends (hx-post) is htmx's: it disables the form's buttons while the
  // request is in flight (hx-disabled-elt) and enables them again if the answer never comes.
  if (form.hasAttribute("hx-post") && window.htmx) return;
  if (form.dataset.sent === "yes") {
    event.preventDefault();
    return;
  }
  form.dataset.sent = "yes";
  // After this submission's event: a disabled button would not send its own name and value.
  setTimeout(() => {
    for (const button of form.querySelectorAll("button")) button.disabled = true;
  }, 0);
});

// An action sent by htmx whose answer is an error (a 4xx or 5xx: htmx swaps nothing) or that
// got no answer at all: said in the page's live region, since the page does not change.
function sayNotDone(text) {
  const region = document.getElementById("messages");
  if (!region) return;
  const notice = document.createElement("p");
  notice.className = "notice bad";
  notice.textContent = text;
  region.replaceChildren(notice);
}
document.addEventListener("htmx:responseError", (event) => {
  if (event.detail.requestConfig.verb === "get") return; // polling: the next poll tries again
  const status = event.detail.xhr.status;
  sayNotDone(`Not done: the server answered ${status}. Reload the page and try again.`);
});
document.addEventListener("htmx:sendError", (event) => {
  if (event.detail.requestConfig.verb === "get") return;
  sayNotDone("Not done: the server could not be reached. Try again in a moment.");
});
