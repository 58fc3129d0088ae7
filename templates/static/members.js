// The members' forms: a form marked data-once disables its buttons once it is sent, so a
// second click sends nothing (the services refuse a repeated action anyway: e.g. a
// tournament is started once, whatever the clicks).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-once")) return;
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
