// Small behaviours htmx does not cover: clear the question once it is sent, send on Enter,
// and keep the newest message in view while an answer streams in.
document.addEventListener("htmx:wsAfterSend", (event) => {
  const question = document.getElementById("question");
  if (question && event.target.closest("#ask-form")) question.value = "";
});
document.addEventListener("htmx:wsAfterMessage", () => {
  const messages = document.getElementById("messages");
  if (messages) messages.scrollTop = messages.scrollHeight;
});
document.addEventListener("keydown", (event) => {
  if (event.target.id === "question" && event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    event.target.form.requestSubmit();
  }
});
