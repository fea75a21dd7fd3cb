// The ask page: sends the question with its options to POST /api/v1/rag/query (streamed, or async
// with a job to poll), shows live status, and renders the answer: citation markers linked to their
// passages, flags, confidence, clickable follow-ups and per-stage timing. A streamed answer shows
// the model's draft text as it is written, then the verified answer in its place; if streaming
// fails before the answer is complete, the question is asked again without it.
"use strict";

(() => {
  const form = document.getElementById("ask-form");
  const statusLine = document.getElementById("status");
  const answerBox = document.getElementById("answer");
  const button = document.getElementById("ask-button");
  const { el } = Lexrag;

  const FLAG_LABELS = {
    hallucination_warning: ["Hallucination warning", "warn"],
    hallucination_detected: ["Unsupported claims removed", "warn"],
    needs_verification: ["Needs verification", "warn"],
    redactions_applied: ["Redactions applied", "info"],
    cache_hit: ["Cache hit", "info"],
    prompt_injection_detected: ["Injection attempt flagged", "warn"],
    indirect_injection_detected: ["Instructions in a document ignored", "warn"],
    answer_sanitized: ["Images or outside links removed", "warn"],
  };

  function requestBody() {
    const data = new FormData(form);
    const body = { query: data.get("query").trim() };
    for (const name of ["response_style", "template_id", "citation_style", "strictness"]) {
      if (data.get(name)) body[name] = data.get(name);
    }
    if (data.get("top_k")) body.top_k = Number(data.get("top_k"));
    const filters = {};
    if (data.get("case")) filters.case_ids = [Number(data.get("case"))];
    if (data.get("date_range_start")) filters.date_range_start = data.get("date_range_start");
    if (data.get("date_range_end")) filters.date_range_end = data.get("date_range_end");
    const jurisdictions = (data.get("jurisdictions") || "").split(",").map((s) => s.trim()).filter(Boolean);
    if (jurisdictions.length) filters.jurisdictions = jurisdictions;
    const docTypes = data.getAll("doc_types");
    if (docTypes.length) filters.doc_types = docTypes;
    if (Object.keys(filters).length) body.filters = filters;
    if (data.get("background")) body.mode = "async";
    if (data.get("agentic")) body.mode = "agentic"; // answered in the page, with the agent's steps
    if (data.get("show_cot_steps")) body.show_cot_steps = true;
    if (data.get("no_cot")) body.cot_enabled = false;
    if (data.get("max_reasoning_depth")) body.max_reasoning_depth = Number(data.get("max_reasoning_depth"));
    return body;
  }

  function fillForm(saved) {
    form.elements.query.value = saved.query || "";
    const options = saved.options || {};
    for (const name of ["response_style", "template_id", "citation_style", "strictness", "top_k", "max_reasoning_depth"]) {
      if (options[name] !== undefined && form.elements[name]) form.elements[name].value = options[name];
    }
    const filters = options.filters || {};
    if (filters.case_ids && filters.case_ids.length) form.elements.case.value = filters.case_ids[0];
    if (filters.date_range_start) form.elements.date_range_start.value = filters.date_range_start;
    if (filters.date_range_end) form.elements.date_range_end.value = filters.date_range_end;
    if (filters.jurisdictions) form.elements.jurisdictions.value = filters.jurisdictions.join(", ");
    for (const box of form.querySelectorAll('input[name="doc_types"]')) {
      box.checked = (filters.doc_types || []).includes(box.value);
    }
  }

  function passageUrl(citation) {
    const range = citation.char_end > citation.char_start ? `?start=${citation.char_start}&end=${citation.char_end}` : "";
    return `/documents/${citation.document_id}/${range}#passage`;
  }

  // The answer text with each [marker] that names a citation turned into a link to it.
  function answerParagraph(text, citations) {
    const byMarker = new Map();
    for (const c of citations) {
      byMarker.set(String(c.citation_id), c);
      if (c.doc_id) byMarker.set(String(c.doc_id), c);
    }
    const p = el("p", { class: "answer-text" });
    let last = 0;
    for (const match of text.matchAll(/\[([^\[\]]{1,40})\]/g)) {
      const citation = byMarker.get(match[1]);
      if (!citation) continue;
      p.append(text.slice(last, match.index));
      p.append(el("a", { href: `#cite-${citation.citation_id}`, class: "marker", title: citation.title, text: match[0] }));
      last = match.index + match[0].length;
    }
    p.append(text.slice(last));
    return p;
  }

  function score(value) { return typeof value === "number" ? value.toFixed(2) : "–"; }

  function render(result) {
    answerBox.replaceChildren();
    answerBox.hidden = false;
    const citations = result.citations || [];
    const flags = result.flags || {};
    const badges = el("p", { class: "flags" });
    for (const [key, [label, kind]] of Object.entries(FLAG_LABELS)) {
      if (flags[key]) badges.append(el("span", { class: `badge ${kind}`, "data-flag": key, text: label }));
    }
    if (typeof result.confidence_score === "number") {
      badges.append(el("span", { class: "badge", "data-flag": "confidence", text: `Confidence ${Math.round(result.confidence_score * 100)}%` }));
    }
    answerBox.append(el("h2", { text: "Answer" }), badges);
    if (result.answer) answerBox.append(answerParagraph(result.answer, citations));
    if (result.replaces_streamed_text) {
      answerBox.append(el("p", { class: "notice", "data-flag": "replaced", text: "Checking the citations changed the answer: this replaces the draft shown while it was written." }));
    }
    if (result.message) answerBox.append(el("p", { class: "notice", text: result.message }));
    const candidates = (result.clarification && result.clarification.candidates) || [];
    if (candidates.length) {
      // The question fits several documents: each is a button that asks again about that one alone.
      if (!result.message) answerBox.append(el("p", { class: "notice", text: result.clarification.message }));
      const list = el("ul", { class: "follow-ups clarification" });
      for (const candidate of candidates) {
        const pick = el("button", { type: "button", class: "link", "data-document-id": candidate.document_id, text: `Ask about “${candidate.title}” only` });
        pick.addEventListener("click", () => {
          const body = requestBody();
          body.filters = { ...(body.filters || {}), document_ids: [candidate.document_id] };
          send(body);
        });
        list.append(el("li", {}, pick));
      }
      answerBox.append(el("h3", { text: "Which document?" }), list);
    }
    if (result.disclaimer) answerBox.append(el("p", { class: "muted small", text: result.disclaimer }));

    if (citations.length) {
      const list = el("ol", { class: "citations" });
      for (const c of citations) {
        list.append(el("li", { id: `cite-${c.citation_id}`, value: /^\d+$/.test(c.citation_id) ? c.citation_id : null },
          el("a", { href: passageUrl(c), class: "citation-link", text: c.title }),
          el("span", { class: "muted", text: ` · page ${c.page}${c.page_end && c.page_end !== c.page ? `–${c.page_end}` : ""}` }),
          el("blockquote", { text: c.snippet }),
          el("span", { class: "muted small", text: `similarity ${score(c.similarity_score)} · rank ${score(c.rank_score)}${c.redacted ? " · redacted" : ""}` })));
      }
      answerBox.append(el("h3", { text: "Sources" }), list);
    }

    const followUps = result.follow_up_questions || [];
    if (followUps.length) {
      const list = el("ul", { class: "follow-ups" });
      for (const question of followUps) {
        const ask = el("button", { type: "button", class: "link", text: question });
        ask.addEventListener("click", () => { form.elements.query.value = question; form.requestSubmit(); });
        list.append(el("li", {}, ask));
      }
      answerBox.append(el("h3", { text: "Follow-up questions" }), list);
    }

    if (result.reasoning) answerBox.append(reasoningSteps(result.reasoning, citations));
    if (result.agent) answerBox.append(agentTrace(result.agent));

    const timing = (result.provenance && result.provenance.timing) || {};
    const rows = el("tbody");
    for (const [stage, ms] of Object.entries(timing.stages || {})) rows.append(el("tr", {}, el("td", { text: stage }), el("td", { text: `${Number(ms).toFixed(1)} ms` })));
    rows.append(el("tr", { class: "total" }, el("td", { text: "total" }), el("td", { text: `${Number(timing.total_ms || 0).toFixed(1)} ms` })));
    answerBox.append(el("details", { class: "timing" }, el("summary", { text: "Timing by stage" }), el("table", { class: "list compact" }, rows)));
    answerBox.append(el("p", { class: "muted small", text: `Request ${result.request_id || ""}` }));
  }

  const NOT_FOUND_STEP = {
    no_passages: "No passage was found for this part (or none fitted the context's token budget).",
    not_in_passages: "Not found in the passages searched for this part.",
    low_confidence: "The answer found for this part was too uncertain to use.",
    unsupported: "The answer found for this part made claims its passages do not support, so it was not used.",
  };

  // Chain of thought: the sub-questions, and (with show_cot_steps) each one's cited answer.
  function reasoningSteps(reasoning, citations) {
    const list = el("ol", { class: "reasoning-steps" });
    const steps = reasoning.steps || reasoning.sub_questions.map((question) => ({ question }));
    for (const step of steps) {
      const item = el("li", {}, el("strong", { text: step.question }));
      if (step.intermediate_answer) item.append(answerParagraph(step.intermediate_answer, citations));
      else if ("intermediate_answer" in step) item.append(el("p", { class: "muted", text: NOT_FOUND_STEP[step.not_found_reason] || "Not found in the sources." }));
      if (typeof step.confidence_score === "number" && step.intermediate_answer) {
        item.append(el("span", { class: "muted small", text: `Confidence ${Math.round(step.confidence_score * 100)}%` }));
      }
      list.append(item);
    }
    const skipped = reasoning.skipped_sub_questions || [];
    return el("details", { class: "reasoning", open: reasoning.steps ? "" : null },
      el("summary", { text: `Reasoning (${reasoning.strategy === "compare" ? "comparison" : "several parts"}): ${steps.length} part(s)` }),
      list,
      skipped.length ? el("p", { class: "muted small", text: `Not reasoned through separately (over the limit): ${skipped.join(" ")}` }) : null);
  }

  // Agentic mode's trace: the decomposition and plan, then each review with its tool call, the
  // call's arguments and what it found.
  function agentTrace(agent) {
    const d = agent.decomposition || {};
    const plan = agent.plan || {};
    const constraints = (d.constraints || []).map((c) => `${c.field} ${c.operator} ${JSON.stringify(c.value)}`).join("; ") || "none";
    const steps = el("ol", { class: "agent-steps" });
    for (const step of agent.steps || []) {
      const review = step.review || {};
      const item = el("li", {}, el("span", { class: `badge ${review.status === "clarify" ? "warn" : "info"}`, text: review.status }), ` ${review.reason || ""}`);
      const call = review.next_tool_call;
      if (call) item.append(el("pre", { class: "tool-call", text: `${call.tool}(${JSON.stringify(call.args)})` }));
      const found = step.result;
      if (found) {
        const summary = found.error ? `error: ${found.error}` : `${found.results} passage(s) from ${found.documents_matched} matching document(s)${found.note ? ` (${found.note})` : ""}`;
        item.append(el("p", { class: "muted small", text: `→ ${summary}` }));
      }
      steps.append(item);
    }
    return el("details", { class: "agent-trace" },
      el("summary", { text: `Agent's steps: ${agent.tool_calls} tool call(s), stopped: ${agent.stopped}` }),
      el("p", { class: "muted small", text: `Intent ${d.intent}; constraints: ${constraints}; strategy ${plan.strategy}; buckets ${(plan.target_buckets || []).join(", ")}` }),
      steps);
  }

  function showError(result) {
    answerBox.hidden = false;
    answerBox.replaceChildren(el("p", { class: "error", role: "alert", text: Lexrag.errorText(result) }));
  }

  // One Server-Sent Event ("event: name" and "data: {json}" lines) as {name, data}; null if unreadable.
  function parseEvent(block) {
    let name = "message", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    try { return { name, data: JSON.parse(data) }; } catch (_) { return null; }
  }

  // The draft while the model writes: plain text (never HTML), replaced by render() at the end.
  function showDraft(sources) {
    const text = el("p", { class: "answer-text draft" });
    const note = sources.length ? `Writing from ${sources.length} passage(s); citations are checked when it is done…` : "Writing…";
    answerBox.replaceChildren(el("h2", { text: "Answer" }), text, el("p", { class: "notice draft-note", text: note }));
    answerBox.hidden = false;
    return text;
  }

  // Asks with "stream": true and renders the events (meta, delta…, then result or error). Resolves
  // true once a result or an error is shown, false when streaming did not work (no stream, the
  // connection dropped before the end): the caller then asks without streaming.
  async function streamAnswer(body, onFirstEvent) {
    let response;
    try {
      response = await fetch("/api/v1/rag/query", {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "text/event-stream", "Content-Type": "application/json", "X-CSRFToken": Lexrag.csrfToken() },
        body: JSON.stringify({ ...body, stream: true }),
      });
    } catch (_) {
      return false;
    }
    const type = response.headers.get("Content-Type") || "";
    if (!type.startsWith("text/event-stream") || !response.body) {
      if (!type.startsWith("application/json")) return false;
      const parsed = await response.json().catch(() => null); // refused before streaming began
      if (!response.ok) showError({ status: response.status, body: parsed });
      else render(parsed);
      return true;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "", draft = null;
    for (;;) {
      let chunk;
      try { chunk = await reader.read(); } catch (_) { return false; }
      if (chunk.done) return false; // ended without its result
      buffer += chunk.value.replace(/\r\n/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (!event) continue;
        if (event.name === "meta") {
          onFirstEvent();
          draft = showDraft(event.data.sources || []);
        } else if (event.name === "delta" && draft) {
          draft.append(event.data.text);
        } else if (event.name === "result") {
          render(event.data);
          return true;
        } else if (event.name === "error") {
          showError({ status: event.data.status, body: event.data });
          return true;
        }
      }
    }
  }

  async function pollJob(pollUrl, started) {
    for (;;) {
      const result = await Lexrag.api(pollUrl);
      if (!result.ok) return showError(result);
      const job = result.body;
      if (job.status === "succeeded") return render(job.result);
      if (job.status === "failed") return showError({ status: (job.error && job.error.status) || 500, body: job.error });
      statusLine.textContent = `${job.status === "queued" ? "Queued" : "Working"}… ${((performance.now() - started) / 1000).toFixed(0)} s`;
      await Lexrag.sleep(1000);
    }
  }

  async function submit(event) {
    event.preventDefault();
    const body = requestBody();
    if (!body.query) {
      showError({ status: 400, body: { message: "Type a question first." } });
      return;
    }
    await send(body);
  }

  async function send(body) {
    button.disabled = true;
    answerBox.hidden = true;
    const started = performance.now();
    const ticker = setInterval(() => { statusLine.textContent = `Searching and answering… ${((performance.now() - started) / 1000).toFixed(1)} s`; }, 200);
    try {
      const writing = () => { clearInterval(ticker); statusLine.textContent = "Writing the answer…"; };
      if (body.mode !== "async" && await streamAnswer(body, writing)) return;
      const result = await Lexrag.api("/api/v1/rag/query", { method: "POST", body });
      clearInterval(ticker);
      if (!result.ok) showError(result);
      else if (result.status === 202 || result.body.poll_url) await pollJob(result.body.poll_url, started);
      else render(result.body);
    } finally {
      clearInterval(ticker);
      statusLine.textContent = "";
      button.disabled = false;
    }
  }

  form.addEventListener("submit", submit);
  const rerun = JSON.parse(document.getElementById("rerun-data").textContent);
  if (rerun) {
    fillForm(rerun);
    form.requestSubmit();
  }
})();
