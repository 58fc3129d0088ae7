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
