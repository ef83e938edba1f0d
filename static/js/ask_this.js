// "Ask about this" on a source page. Selecting text in the passages shows a button beside the
// selection; it opens a panel with the selection quoted above a question box. The question goes over
// the chat's websocket (htmx's extension, connected when the panel first opens) with the source, the
// selected text and the passage it starts in; the answer streams in as in the chat (chat.js).

const passages = document.getElementById("passages");
const button = document.getElementById("ask-this");
const panel = document.getElementById("ask-about");
let current = null; // { text, chunk } of the selection the button would ask about

// The selected text of the passages only: a selection across passages leaves out their headings
// (page numbers, timestamps), which are not the source's text. Passages are joined by a line break.
function selectedInPassages() {
  const selection = document.getSelection();
  if (!passages || !selection || selection.isCollapsed || !selection.rangeCount) return null;
  const range = selection.getRangeAt(0);
  if (!passages.contains(range.commonAncestorContainer)) return null;
  const parts = [];
  const sections = [];
  for (const text of passages.querySelectorAll(".passage > .text")) {
    if (!range.intersectsNode(text)) continue;
    const part = document.createRange();
    part.selectNodeContents(text);
    if (range.compareBoundaryPoints(Range.START_TO_START, part) > 0) part.setStart(range.startContainer, range.startOffset);
    if (range.compareBoundaryPoints(Range.END_TO_END, part) < 0) part.setEnd(range.endContainer, range.endOffset);
    const words = part.toString().trim();
    if (!words) continue;
    parts.push(words);
    sections.push(text.closest(".passage"));
  }
  const text = parts.join("\n");
  return text ? { text, chunk: sections[0].dataset.chunk, sections, range } : null;
}

// The button sits just below the end of the selection, and right after its passage in the page's
// order, so that Tab from a selection made with the keyboard reaches it next.
function showButton(found) {
  const rects = found.range.getClientRects();
  const last = rects[rects.length - 1] || found.range.getBoundingClientRect();
  const passage = found.range.endContainer.parentElement?.closest(".passage");
  if (passage && button.previousElementSibling !== passage) passage.after(button);
  const tooLong = found.text.length > Number(passages.dataset.max || Infinity);
  button.textContent = tooLong ? `Select less to ask (at most ${passages.dataset.max} characters)` : "Ask about this";
  button.disabled = tooLong;
  button.hidden = false;
  const left = Math.min(last.right + window.scrollX - button.offsetWidth / 2, window.scrollX + document.documentElement.clientWidth - button.offsetWidth - 8);
  button.style.left = `${Math.max(left, window.scrollX + 8)}px`;
  button.style.top = `${last.bottom + window.scrollY + 6}px`;
}

let pending = null;
document.addEventListener("selectionchange", () => {
  clearTimeout(pending);
  pending = setTimeout(() => {
    const found = selectedInPassages();
    // Focus on the button (reached with Tab) leaves the selection as it was; anything else hides it.
    if (!found) {
      if (document.activeElement !== button) button.hidden = true;
      return;
    }
    current = found;
    showButton(found);
  }, 120);
});

// Pressing the button must not take the selection away before the click reads it.
button?.addEventListener("mousedown", (event) => event.preventDefault());

// Alt+A asks about the selection, however it was made (caret browsing, a screen reader): Tab reaches
// the button only from where the mouse last was.
document.addEventListener("keydown", (event) => {
  if (!event.altKey || event.ctrlKey || event.metaKey || event.code !== "KeyA" || button.hidden || button.disabled) return;
  event.preventDefault();
  button.click();
});

function connect() {
  if (panel.hasAttribute("ws-connect")) return;
  panel.setAttribute("ws-connect", "/ws/chat/");
  document.getElementById("ask-form").setAttribute("ws-send", "");
  htmx.process(panel);
}

button?.addEventListener("click", () => {
  if (!current) return;
  // One conversation per visit to the page: each question in it carries its own selection.
  document.getElementById("selection-text").value = current.text;
  document.getElementById("selection-chunk").value = current.chunk || "";
  document.getElementById("ask-selection").textContent = current.text;
  // The question box takes the selection's highlight away: its passages stay marked instead.
  for (const passage of passages.querySelectorAll(".passage.asked")) passage.classList.remove("asked");
  for (const passage of current.sections) passage.classList.add("asked");
  button.hidden = true;
  panel.hidden = false;
  document.body.classList.add("asking");
  connect();
  document.getElementById("question").focus();
});

function closePanel() {
  panel.hidden = true;
  document.body.classList.remove("asking");
  for (const passage of passages.querySelectorAll(".passage.asked")) passage.classList.remove("asked");
}
document.getElementById("ask-about-close")?.addEventListener("click", closePanel);
panel?.addEventListener("keydown", (event) => {
  if (event.key === "Escape") closePanel();
});
