// Drag-and-drop upload: each file gets its own row with the upload's progress; once stored, its
// source row (whose processing then updates live over the jobs websocket) joins the list.
(() => {
  const zone = document.getElementById("dropzone");
  if (!zone) return;
  const input = document.getElementById("file-input");
  const list = document.getElementById("uploads");
  const maxBytes = Number(zone.dataset.maxMb) * 1024 * 1024;
  const csrf = zone.querySelector("[name=csrfmiddlewaretoken]").value;
  const queue = [];
  let active = 0;

  function row(file) {
    const item = document.createElement("li");
    item.className = "upload";
    const name = document.createElement("span");
    name.textContent = file.name;
    const bar = document.createElement("progress");
    bar.max = 100; bar.value = 0;
    bar.setAttribute("aria-label", `${file.name} upload`);
    const state = document.createElement("span");
    state.className = "muted state";
    state.textContent = "Waiting…";
    item.append(name, bar, state);
    list.prepend(item);
    return { item, bar, state };
  }

  function fail(view, message) {
    view.item.classList.add("upload--failed");
    view.item.dataset.status = "failed";
    view.bar.remove();
    view.state.className = "error state";
    view.state.textContent = message;
  }

  function errorText(xhr) {
    try { return JSON.parse(xhr.responseText).error.message; } catch (e) { return xhr.responseText || `Upload failed (${xhr.status}).`; }
  }

  function send(file, view, caption, secret) {
    active += 1;
    const body = new FormData();
    body.append("file", file);
    if (caption) body.append("caption", caption);
    if (secret) body.append("private", "true");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", zone.action);
    xhr.setRequestHeader("X-CSRFToken", csrf);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) view.bar.value = Math.round((100 * event.loaded) / event.total);
      view.state.textContent = "Uploading…";
    };
    xhr.onload = () => {
      if (xhr.status === 200) {
        const holder = document.createElement("ul");
        holder.innerHTML = xhr.responseText.trim();
        const source = holder.firstElementChild;
        document.getElementById("sources").prepend(source);
        htmx.process(source);
        view.item.dataset.status = "uploaded";
        view.bar.value = 100;
        view.source = source.id;
        uploaded.push(view);
        follow(view);
      } else {
        fail(view, errorText(xhr));
      }
    };
    xhr.onerror = () => fail(view, "The connection broke during the upload; try again.");
    xhr.onloadend = () => { active -= 1; next(); };
    xhr.send(body);
  }

  // The upload row says what became of its file: the source row's job status, which the jobs
  // websocket swaps in as processing moves on, is mirrored here until it is ready or has failed.
  const uploaded = [];
  const outcome = {
    queued: "Uploaded — waiting to be processed",
    running: "Uploaded — processing",
    done: "Uploaded — ready",
    failed: "Uploaded — processing failed, see Your sources",
    cancelled: "Uploaded — processing cancelled",
  };
  function follow(view) {
    const source = document.getElementById(view.source);
    const job = source && source.querySelector(".job");
    const status = source ? job && job.dataset.status : "deleted";
    view.item.dataset.job = status || "";
    view.state.textContent = status === "deleted" ? "Uploaded — since deleted" : outcome[status] || "Uploaded";
  }
  new MutationObserver(() => uploaded.forEach(follow)).observe(document.getElementById("sources"), {
    childList: true, subtree: true, attributes: true, attributeFilter: ["data-status"],
  });

  function next() {
    while (active < 2 && queue.length) send(...queue.shift());
  }

  // The caption typed above goes with the images of the next drop (only an image takes one), then
  // the field is cleared for the next.
  const captionInput = document.getElementById("caption-input");
  const isImage = (file) => file.type.startsWith("image/") || /\.(png|jpe?g|heic|heif|webp)$/i.test(file.name);

  function add(files) {
    const caption = captionInput ? captionInput.value.trim() : "";
    let captioned = false;
    // Private as the box was when the files were chosen, whenever their turn to upload comes.
    const secret = document.getElementById("upload-private")?.checked || false;
    for (const file of files) {
      const view = row(file);
      const own = isImage(file) ? caption : "";
      captioned = captioned || Boolean(own);
      if (file.size > maxBytes) fail(view, `Larger than the ${zone.dataset.maxMb} MB limit.`);
      else queue.push([file, view, own, secret]);
    }
    if (captioned) captionInput.value = "";
    next();
  }
  // Enter in the caption would post the drop zone's form with no file in it.
  captionInput?.addEventListener("keydown", (event) => { if (event.key === "Enter") event.preventDefault(); });

  input.addEventListener("change", () => { add(input.files); input.value = ""; });
  ["dragenter", "dragover"].forEach((type) => zone.addEventListener(type, (event) => {
    event.preventDefault(); zone.classList.add("dropzone--over");
  }));
  ["dragleave", "drop"].forEach((type) => zone.addEventListener(type, () => zone.classList.remove("dropzone--over")));
  zone.addEventListener("drop", (event) => { event.preventDefault(); add(event.dataTransfer.files); });
})();
