// The chat page's behaviours htmx does not cover. The answers themselves arrive over the socket
// as HTML fragments; this file only handles the keyboard, copying, and a lost connection.

// Enter sends, Shift+Enter starts a new line (and Enter while an input method composes does neither).
document.addEventListener("keydown", (event) => {
  if (event.target.id !== "question" || event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  if (event.target.value.trim()) event.target.form.requestSubmit();
});

// "Include private sources" goes with whatever asks: the question, Regenerate, Retry, the × on a date.
document.addEventListener("htmx:wsConfigSend", (event) => {
  const box = document.getElementById("include-private");
  if (box && event.detail.parameters.action !== "stop") event.detail.parameters.include_private = box.checked ? "true" : "";
});

// Clear the question once it is sent; keep the newest message in view while an answer streams in.
document.addEventListener("htmx:wsAfterSend", (event) => {
  const question = document.getElementById("question");
  if (question && event.target.closest("#ask-form")) question.value = "";
});
document.addEventListener("htmx:wsAfterMessage", () => {
  const messages = document.getElementById("messages");
  if (messages) messages.scrollTop = messages.scrollHeight;
  // An answer that ended in an error keeps its streamed text; it is no longer being written.
  for (const answer of document.querySelectorAll('.answer[aria-busy="true"]')) {
    if (!answer.closest(".msg--assistant").querySelector("button.stop")) answer.setAttribute("aria-busy", "false");
  }
  // A new conversation gets its own address at once, so a reload or a shared link comes back to it.
  const id = document.getElementById("conversation-id")?.value;
  if (id && location.pathname === "/chat/") history.replaceState(null, "", `/chat/${id}/`);
});

// The conversation list is a <details>: folded on a phone, always open where there is room.
const wide = window.matchMedia("(min-width: 721px)");
function fitConversations() {
  const list = document.getElementById("conversations");
  if (list) list.open = wide.matches;
}
wide.addEventListener("change", fitConversations);
document.addEventListener("DOMContentLoaded", fitConversations);

// Copy: the answer as read, without its [n] markers.
async function writeClipboard(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API outside a secure context (a self-hosted server on plain http): the old way.
    const area = Object.assign(document.createElement("textarea"), { value: text });
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.copy[data-copy]");
  if (!button) return;
  const answer = document.getElementById(button.dataset.copy);
  if (!answer) return;
  await writeClipboard(answer.innerText.replace(/\s?\[\d{1,3}\]/g, "").trim());
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 2000);
});

// A dropped socket is never silent: say so, mark the answer it interrupted, offer to reconnect.
// htmx's extension retries by itself after an abnormal close; the button retries at once.
let socket = null;
function conversationUrl() {
  const id = document.getElementById("conversation-id")?.value;
  return id ? `/chat/${id}/` : "/chat/";
}
function showConnectionLost() {
  const banner = document.getElementById("chat-error");
  banner.className = "error connection";
  banner.dataset.event = "connection-lost";
  banner.replaceChildren("Connection lost. ");
  const retry = Object.assign(document.createElement("button"), { type: "button", textContent: "Reconnect" });
  retry.addEventListener("click", () => socket?.reconnect());
  banner.append(retry);
  for (const stop of document.querySelectorAll("#messages .actions button.stop")) {
    const turn = stop.closest(".msg--assistant");
    stop.closest("form").remove();
    turn.querySelector(".stage")?.replaceChildren();
    const alert = turn.querySelector(".alert");
    alert.className = "alert error";
    alert.replaceChildren("Connection lost: this answer was interrupted. ");
    const reload = Object.assign(document.createElement("a"), { href: conversationUrl(), textContent: "Reload the conversation" });
    alert.append(reload);
  }
}
// Leaving the page closes the socket too; that is no loss worth a banner.
let leaving = false;
window.addEventListener("pagehide", () => { leaving = true; });
window.addEventListener("pageshow", () => { leaving = false; });
// The thread says whether its socket is open (`data-socket`): a question sent before it opens is lost.
function markSocket(state) {
  document.querySelector(".thread")?.setAttribute("data-socket", state);
}
document.addEventListener("htmx:wsClose", (event) => {
  socket = event.detail.socketWrapper;
  markSocket("closed");
  if (!leaving) showConnectionLost();
});
document.addEventListener("htmx:wsOpen", (event) => {
  socket = event.detail.socketWrapper;
  markSocket("open");
  const banner = document.getElementById("chat-error");
  if (banner?.dataset.event === "connection-lost") {
    banner.className = "";
    delete banner.dataset.event;
    banner.replaceChildren();
  }
});
