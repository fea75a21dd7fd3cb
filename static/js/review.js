// Review tables: the case's Review page starts a table (columns picked, or a saved set) and the
// table's page follows its progress every second, then shows the cells (reloading once it is
// done; the cells filled so far are on the page when it is opened); cancel, re-run and a lawyer's
// review of a cell go through the REST API.
"use strict";

(() => {
  const form = document.getElementById("review-form");
  if (form) {
    const section = document.getElementById("new-table");
    const error = document.getElementById("review-error");
    const templates = document.getElementById("template-columns");
    const picked = () => {
      const columns = [...form.querySelectorAll('input[name="column"]:checked')].map((box) => ({ key: box.value }));
      for (const line of document.getElementById("questions").value.split("\n")) {
        if (line.trim()) columns.push({ question: line.trim() });
      }
      return columns;
    };
    const show = (text) => { error.textContent = text; error.hidden = !text; };
    const chooser = document.getElementById("template");
    if (chooser && templates) {
      const sets = JSON.parse(templates.textContent);
      chooser.addEventListener("change", () => {
        const columns = sets[chooser.value] || [];
        const keys = new Set(columns.filter((c) => c.key).map((c) => c.key));
        for (const box of form.querySelectorAll('input[name="column"]')) box.checked = keys.has(box.value);
        document.getElementById("questions").value = columns.filter((c) => c.question).map((c) => c.question).join("\n");
      });
    }
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const columns = picked();
      if (!columns.length) return show("Choose at least one column or type a question.");
      show("");
      const button = document.getElementById("start-review");
      button.disabled = true;
      const name = document.getElementById("table-name").value.trim();
      const result = await Lexrag.api(section.dataset.createUrl, { method: "POST", body: { name, columns } });
      button.disabled = false;
      if (!result.ok) return show(Lexrag.errorText(result));
      window.location.href = section.dataset.tableUrl.replace(/0\/$/, `${result.body.id}/`);
    });
    const save = document.getElementById("save-template");
    if (save) {
      save.addEventListener("click", async () => {
        const columns = picked();
        const name = document.getElementById("table-name").value.trim();
        if (!columns.length || !name) return show("Name the set and choose its columns first.");
        const result = await Lexrag.api("/api/v1/rag/review-templates", { method: "POST", body: { name, columns } });
        if (!result.ok) return show(Lexrag.errorText(result));
        show("");
        const saved = document.getElementById("template-saved");
        saved.textContent = `Saved for the firm as "${result.body.name}".`;
        saved.hidden = false;
      });
    }
  }

  const panel = document.getElementById("review-status");
  if (!panel) return;
  const status = document.getElementById("table-status");
  const bar = document.getElementById("table-progress");
  const count = document.getElementById("table-count");
  const failure = document.getElementById("table-error");
  const cancel = document.getElementById("cancel-table");
  const rerun = document.getElementById("rerun-table");

  function render(body) {
    status.textContent = body.status.charAt(0).toUpperCase() + body.status.slice(1);
    status.className = `status status-${body.status}`;
    bar.max = Math.max(body.progress.total, 1);
    bar.value = body.progress.done;
    count.textContent = `${body.progress.done} of ${body.progress.total} cells`;
  }

  async function follow() {
    for (;;) {
      await Lexrag.sleep(1000);
      const result = await Lexrag.api(panel.dataset.statusUrl);
      if (!result.ok) { failure.textContent = Lexrag.errorText(result); failure.hidden = false; return; }
      render(result.body);
      if (!["queued", "running"].includes(result.body.status)) { window.location.reload(); return; }
    }
  }

  async function post(button) {
    button.disabled = true;
    const result = await Lexrag.api(button.dataset.url, { method: "POST" });
    button.disabled = false;
    if (!result.ok) { failure.textContent = Lexrag.errorText(result); failure.hidden = false; return; }
    window.location.reload();
  }

  // A lawyer's review of one cell: their answer and note, saved through the REST API (PUT), or
  // taken back (DELETE); the page reloads to show the table as everyone now sees it.
  const reviewForm = document.getElementById("review-cell-form");
  document.querySelectorAll("button.review-cell").forEach((button) => {
    button.addEventListener("click", () => {
      const cell = button.closest("td");
      if (cell.querySelector("form")) return;
      const form = reviewForm.content.firstElementChild.cloneNode(true);
      form.elements.answer.value = button.dataset.answer;
      form.elements.note.value = button.dataset.note;
      const unreview = form.querySelector('[data-action="unreview"]');
      unreview.hidden = button.dataset.reviewed !== "true";
      const problem = form.querySelector(".error");
      const send = async (options) => {
        const result = await Lexrag.api(cell.dataset.url, options);
        if (!result.ok) { problem.textContent = Lexrag.errorText(result); problem.hidden = false; return; }
        window.location.reload();
      };
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        send({ method: "PUT", body: { answer: form.elements.answer.value, note: form.elements.note.value } });
      });
      form.querySelector('[data-action="cancel"]').addEventListener("click", () => form.remove());
      unreview.addEventListener("click", () => send({ method: "DELETE" }));
      cell.appendChild(form);
      form.elements.answer.focus();
    });
  });

  if (cancel) cancel.addEventListener("click", () => post(cancel));
  if (rerun) rerun.addEventListener("click", () => post(rerun));
  if (panel.dataset.active === "true") follow();
})();
