// The dashboard's only script (served from the gateway itself; the CSP allows no other): copy
// buttons, and a confirmation before destructive actions. Every page works without it.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  await navigator.clipboard.writeText(source.textContent.trim());
  const status = document.getElementById(`${button.getAttribute('data-copy')}-status`);
  if (status) status.textContent = 'Copied to the clipboard.';
});
document.addEventListener('submit', (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.getAttribute('data-confirm') : null;
  if (question && !window.confirm(question)) event.preventDefault();
});
