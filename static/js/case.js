// The case page: drag-and-drop upload with one progress bar per file, from upload through
// ingestion (polling the document), each failure in plain words; delete and reindex buttons.
"use strict";

(() => {
  const zone = document.getElementById("upload");
  const table = document.querySelector("#documents tbody");
  const done = document.getElementById("uploads-done"); // "some failed" and a refresh button

  function fileRow(file) {
    const bar = Lexrag.el("progress", { max: "100", value: "0", "aria-label": `Progress of ${file.name}` });
    const state = Lexrag.el("span", { class: "state", text: "Waiting…" });
    const row = Lexrag.el("li", { class: "upload" }, Lexrag.el("span", { class: "name", text: file.name }), bar, state);
    document.getElementById("uploads").append(row);
    return {
      row,
      set(percent, text, kind = "") {
        bar.value = percent;
        bar.hidden = kind === "failed" || kind === "duplicate"; // no full bar for a file not added
        state.replaceChildren(text);
        row.className = `upload ${kind}`;
      },
    };
  }

  // XMLHttpRequest, not fetch: it reports upload progress.
  function send(file, ui) {
    return new Promise((resolve) => {
      const form = new FormData();
      form.append("files", file);
      form.append("doc_type", document.getElementById("doc-type").value);
      form.append("sensitivity", document.getElementById("sensitivity").value);
      form.append("jurisdiction", document.getElementById("jurisdiction").value);
      const xhr = new XMLHttpRequest();
      xhr.open("POST", zone.dataset.uploadUrl);
      xhr.setRequestHeader("X-CSRFToken", Lexrag.csrfToken());
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.onprogress = (event) => {
        if (event.lengthComputable) ui.set(Math.round((event.loaded / event.total) * 30), "Uploading…");
      };
      xhr.onload = () => {
        let body = null;
        try { body = JSON.parse(xhr.responseText); } catch (_) { body = null; }
        resolve({ ok: xhr.status >= 200 && xhr.status < 300, status: xhr.status, body });
      };
      xhr.onerror = () => resolve({ ok: false, status: 0, body: { message: "The upload was interrupted. Try again." } });
      xhr.send(form);
    });
  }

  async function follow(documentId, ui) {
    for (;;) {
      const result = await Lexrag.api(`/api/v1/rag/documents/${documentId}`);
      if (!result.ok) return fail(ui, Lexrag.errorText(result));
      const doc = result.body;
      if (doc.status === "ready") {
        // An e-mail's attachments were split off by its ingestion: each is a document of its own.
        const attached = doc.attachments === "extracted" && doc.attachment_ids.length
          ? `; ${doc.attachment_ids.length} attachment(s) added as documents` : "";
        ui.set(100, `Ready: ${doc.page_count} page(s), ${doc.chunk_count} passage(s)${attached}`, "ready");
        return true;
      }
      if (doc.status === "failed") return fail(ui, doc.error_message || "The document could not be read.");
      ui.set(30 + Math.round(doc.progress * 0.7), doc.stage ? `Indexing: ${doc.stage}` : "Queued for indexing…");
      await Lexrag.sleep(1000);
    }
  }

  // Resolves to true when the file ended ready (or was already there), false when it failed.
  async function upload(file) {
    const ui = fileRow(file);
    const maxBytes = Number(zone.dataset.maxMb) * 1024 * 1024;
    if (file.size > maxBytes) return fail(ui, `Too large: the limit is ${zone.dataset.maxMb} MB.`);
    const result = await send(file, ui);
    if (!result.ok) return fail(ui, fileError(result, file));
    const doc = result.body.documents[0];
    if (doc.duplicate) {
      const link = Lexrag.el("a", { href: `/documents/${doc.id}/`, text: doc.title || "open it" });
      ui.set(100, Lexrag.el("span", {}, "Already in this case, as ", link, ": nothing new was stored."), "duplicate");
      return "duplicate";
    }
    ui.set(30, doc.attachments === "pending" ? "Uploaded; its attachments are extracted while it is indexed" : "Uploaded");
    return follow(doc.id, ui);
  }

  // The one reason this file was refused: its own entry of the error's per-file details when
  // there is one (the summary message repeats every file's reason), else the message.
  function fileError(result, file) {
    const files = (result.body && result.body.details && result.body.details.files) || [];
    const own = Array.isArray(files) && files.find((entry) => entry.filename === file.name);
    if (own && own.message) return own.message;
    return (result.body && result.body.message) || Lexrag.errorText(result);
  }

  function fail(ui, text) {
    ui.set(100, text, "failed");
    return false;
  }

  // Files of every batch still uploading or indexing, and whether any of them needs its message
  // kept (it failed, or was already in the case). The page reloads (the document list, with the
  // new rows and their counts) only once nothing is in flight and no message must stay: a reload
  // would cancel the uploads of a batch dropped meanwhile and wipe the messages. Otherwise the
  // list is refreshed on request.
  let inFlight = 0;
  let anyFailed = false;
  let anyDuplicate = false;

  async function uploadAll(files) {
    const list = Array.from(files);
    inFlight += list.length;
    done.hidden = true;
    await Promise.all(list.map(async (file) => {
      let outcome = false;
      try {
        outcome = await upload(file);
      } finally {
        inFlight -= 1;
        if (!outcome) anyFailed = true;
        if (outcome === "duplicate") anyDuplicate = true;
      }
    }));
    if (inFlight > 0) return; // another batch is still going: its end decides
    if (!anyFailed && !anyDuplicate) return window.location.reload();
    done.querySelector(".summary").textContent = anyFailed
      ? "Some files could not be added; the reason is given beside each."
      : "Nothing new was added: the files were already in this case.";
    done.hidden = false;
  }

  const refresh = document.getElementById("refresh-list");
  if (refresh) refresh.addEventListener("click", () => window.location.reload());

  if (zone) {
    const drop = zone.querySelector(".dropzone");
    const input = document.getElementById("file-input");
    drop.addEventListener("click", (event) => { if (event.target !== input) input.click(); });
    drop.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") input.click(); });
    input.addEventListener("change", () => { if (input.files.length) uploadAll(input.files); });
    ["dragenter", "dragover"].forEach((name) => drop.addEventListener(name, (event) => { event.preventDefault(); drop.classList.add("over"); }));
    ["dragleave", "drop"].forEach((name) => drop.addEventListener(name, (event) => { event.preventDefault(); drop.classList.remove("over"); }));
    drop.addEventListener("drop", (event) => { if (event.dataTransfer.files.length) uploadAll(event.dataTransfer.files); });
  }

  if (table) {
    table.addEventListener("click", async (event) => {
      const button = event.target.closest("button[data-action]");
      if (!button) return;
      if (button.dataset.action === "delete" && !window.confirm(`Delete “${button.dataset.title}” and its passages?`)) return;
      button.disabled = true;
      const result = await Lexrag.api(button.dataset.url, { method: button.dataset.action === "delete" ? "DELETE" : "POST", body: button.dataset.action === "delete" ? null : {} });
      if (!result.ok) {
        button.disabled = false;
        window.alert(Lexrag.errorText(result));
        return;
      }
      window.location.reload();
    });
  }
})();
