// Audio sources: a passage's ▶ plays from its start, and arriving at #chunk-N (from a citation)
// puts the player at that passage's second and plays it where autoplay is allowed.
function seekTo(start, play) {
  const player = document.getElementById("player");
  if (!player) return;
  const go = () => { player.currentTime = Number(start); if (play) player.play().catch(() => {}); };
  if (player.readyState >= 1) go(); else player.addEventListener("loadedmetadata", go, { once: true });
}
document.addEventListener("click", (event) => {
  const button = event.target.closest(".play[data-start]");
  if (button) seekTo(button.dataset.start, true);
});
document.addEventListener("DOMContentLoaded", () => {
  const target = location.hash && document.querySelector(location.hash);
  // Arriving from a citation means "let me hear it": play if the browser allows it without a
  // click here, else the player waits at that second.
  if (target && target.dataset.start) seekTo(target.dataset.start, true);
});

// Sign-up: the account's time zone starts as this browser's; the server checks it (UTC otherwise).
document.addEventListener("DOMContentLoaded", () => {
  let zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch { /* an old browser: UTC */ }
  for (const input of document.querySelectorAll("input[data-browser-zone]")) input.value = zone;
});

// The jobs websocket can tell of a job before its row is on the page (the worker was quicker than
// the response that adds the row): what it says then waits, and is put in place when the row arrives.
document.addEventListener("DOMContentLoaded", () => {
  const sources = document.getElementById("sources");
  if (!sources) return;
  const waiting = new Map(); // element id → the newest state the socket sent for it
  const apply = (part) => {
    const current = document.getElementById(part.id);
    if (!current) return false;
    part.removeAttribute("hx-swap-oob");
    current.replaceWith(part);
    htmx.process(part);
    return true;
  };
  document.body.addEventListener("htmx:wsBeforeMessage", (event) => {
    if (event.target.getAttribute("ws-connect") !== "/ws/jobs/") return;
    const holder = document.createElement("template");
    holder.innerHTML = event.detail.message;
    const parts = [...holder.content.children];
    if (parts.every((part) => part.id && document.getElementById(part.id))) return; // htmx swaps it
    event.preventDefault();
    for (const part of parts) if (part.id && !apply(part)) waiting.set(part.id, part);
  });
  new MutationObserver(() => {
    for (const [id, part] of waiting) if (apply(part)) waiting.delete(id);
  }).observe(sources, { childList: true });
});
