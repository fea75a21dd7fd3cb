// The case page: drag-and-drop upload with one progress bar per file, from upload through
// ingestion (one poll for every file in flight), each failure in plain words; the documents list
// refreshes itself; delete and reindex buttons.
"use strict";

(() => {
  const zone = document.getElementById("upload");
  const table = document.querySelector("#documents tbody");
  const done = document.getElementById("uploads-done"); // "some failed" and a refresh button
  const docType = document.getElementById("doc-type");

  function fileRow(file) {
    const bar = Lexrag.el("progress", { max: "100", value: "0", "aria-label": `Progress of ${file.name}` });
    const state = Lexrag.el("span", { class: "state", text: "Waiting…" });
    const row = Lexrag.el("li", { class: "upload" }, Lexrag.el("span", { class: "name", text: file.name }), bar, state);
    document.getElementById("uploads").append(row);
    return {
      row,
      set(percent, text, kind = "") {
        bar.value = percent;
        // No full bar for a file not added, or not known to be.
        bar.hidden = kind === "failed" || kind === "duplicate" || kind === "unknown";
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
      form.append("doc_type", docType.value);
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
        const retryAfter = Lexrag.retryAfter(xhr.getResponseHeader("Retry-After"));
        resolve({ ok: xhr.status >= 200 && xhr.status < 300, status: xhr.status, body, retryAfter });
      };
      xhr.onerror = () => resolve({ ok: false, status: 0, body: { message: "The upload was interrupted. Try again." }, retryAfter: null });
      xhr.send(form);
    });
  }

  // How long to wait before asking again when the per-user throttle said 429 with Retry-After,
  // else null. A second of jitter keeps the files of a batch from all coming back at once. (The
  // 429 of TooManyIngestJobs has no Retry-After: it is a refusal, not a reason to retry.)
  function throttleWait(result) {
    if (result.status !== 429 || result.retryAfter == null) return null;
    return result.retryAfter * 1000 + Math.random() * 1000;
  }

  // Every document being indexed, followed together: one request per tick reads the progress of
  // all of them (the case's list filtered by id), so a batch of any size stays far under the
  // throttle. A failed read is retried (throttled: after Retry-After; network or server errors:
  // backing off); a file turns red only when its document failed.
  const TICK_MS = 1000;
  const MAX_IDS = 200; // the API's limit per request; more wait for the next ticks
  const following = new Map(); // document id → {ui, resolve}
  let polling = false;
  let listStale = false; // a document was added or settled since the list was last refreshed

  function follow(documentId, ui) {
    return new Promise((resolve) => {
      following.set(documentId, { ui, resolve });
      listStale = true;
      if (!polling) poll();
    });
  }

  function settle(documentId, outcome) {
    following.get(documentId).resolve(outcome);
    following.delete(documentId);
    listStale = true;
  }

  async function poll() {
    polling = true;
    let wait = TICK_MS;
    let failures = 0;
    while (following.size) {
      await Lexrag.sleep(wait);
      const ids = [...following.keys()].slice(0, MAX_IDS);
      const query = ids.map((id) => `id=${id}`).join("&");
      const result = await Lexrag.api(`${zone.dataset.uploadUrl}?${query}&page_size=${MAX_IDS}`);
      if (!result.ok) {
        failures += 1;
        const throttled = throttleWait(result);
        const transient = result.status === 0 || result.status >= 500;
        if (throttled === null && !transient) {
          // Signed out, or the case is gone: the files' fate is unknown, not failed.
          const text = `Progress unavailable: ${Lexrag.errorText(result)} Reload the page to see its status.`;
          for (const id of ids) unknown(id, text);
          continue;
        }
        wait = throttled !== null ? throttled : Math.min(TICK_MS * 2 ** failures, 30000);
        continue;
      }
      failures = 0;
      wait = TICK_MS;
      const seen = new Set();
      for (const doc of result.body.results) {
        seen.add(doc.id);
        update(doc);
      }
      for (const id of ids) {
        if (!seen.has(id) && following.has(id)) unknown(id, "It is no longer in this case (deleted or moved meanwhile).");
      }
      if (listStale) await refreshList();
    }
    polling = false;
    if (listStale) await refreshList();
  }

  function unknown(documentId, text) {
    following.get(documentId).ui.set(100, text, "unknown");
    settle(documentId, "unknown");
  }

  function update(doc) {
    const { ui } = following.get(doc.id) || {};
    if (!ui) return;
    if (doc.status === "ready") {
      // An e-mail's attachments were split off by its ingestion: each is a document of its own.
      const attached = doc.attachments === "extracted" && doc.attachment_ids.length
        ? `; ${doc.attachment_ids.length} attachment(s) added as documents` : "";
      ui.set(100, `Ready: ${doc.page_count} page(s), ${doc.chunk_count} passage(s)${attached}`, "ready");
      settle(doc.id, true);
    } else if (doc.status === "failed") {
      fail(ui, doc.error_message || "The document could not be read.");
      settle(doc.id, false);
    } else {
      ui.set(30 + Math.round(doc.progress * 0.7), doc.stage ? `Indexing: ${doc.stage}` : "Queued for indexing…");
    }
  }

  // The documents list, re-read from this page's own server-rendered rows without reloading: a
  // reload would cancel the uploads in flight and wipe the messages beside the files.
  async function refreshList() {
    listStale = false;
    try {
      const response = await fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("#documents tbody");
      if (fresh) table.replaceChildren(...fresh.children);
    } catch (_) {
      listStale = true; // the next tick tries again
    }
  }

  // Resolves to true when the file ended ready, "duplicate" when it was already there, "unknown"
  // when its progress could not be read, false when it failed.
  async function upload(file) {
    const ui = fileRow(file);
    const maxBytes = Number(zone.dataset.maxMb) * 1024 * 1024;
    if (file.size > maxBytes) return fail(ui, `Too large: the limit is ${zone.dataset.maxMb} MB.`);
    let result = await send(file, ui);
    for (let wait = throttleWait(result); wait !== null; wait = throttleWait(result)) {
      ui.set(0, `Waiting: the server asked to slow down, trying again in ${Math.ceil(wait / 1000)} s…`);
      await Lexrag.sleep(wait);
      result = await send(file, ui);
    }
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

  // Files of every batch still uploading or indexing, and what their ends said. The list refreshes
  // by itself as files settle; once nothing is in flight, a note sums up what needs reading (a
  // file refused or failed, already in the case, or whose progress could not be read).
  let inFlight = 0;
  let anyFailed = false;
  let anyDuplicate = false;
  let anyUnknown = false;

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
        if (outcome === "unknown") anyUnknown = true;
      }
    }));
    if (inFlight > 0) return; // another batch is still going: its end decides
    const summary = anyFailed ? "Some files could not be added; the reason is given beside each."
      : anyUnknown ? "Some files could not be followed to the end; the reason is given beside each."
        : anyDuplicate ? "Nothing new was stored for the files already in this case."
          : "";
    [anyFailed, anyDuplicate, anyUnknown] = [false, false, false]; // the next batch starts afresh
    done.querySelector(".summary").textContent = summary;
    done.hidden = !summary;
    refreshList(); // the files refused or already there were never followed
  }

  const refresh = document.getElementById("refresh-list");
  if (refresh) refresh.addEventListener("click", () => refreshList());

  // The document type chosen last is the next upload's too, across reloads and visits (a batch of
  // contracts rarely ends with one file).
  const DOC_TYPE_KEY = "lexrag.upload.docType";
  if (docType) {
    try {
      const saved = window.localStorage.getItem(DOC_TYPE_KEY);
      if (saved && [...docType.options].some((option) => option.value === saved)) docType.value = saved;
      docType.addEventListener("change", () => window.localStorage.setItem(DOC_TYPE_KEY, docType.value));
    } catch (_) { /* storage disabled: the type is chosen each visit */ }
  }

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
